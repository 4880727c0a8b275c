//! [`FloatControl`]: the floating-point environment of one thread, the bits of its control
//! register that change results, and what the engine's simulation expects of them.
//!
//! Every float operation rounds by the thread's control register, and some settings change the
//! bits of ordinary results: flushing subnormal results or inputs to zero, rounding toward zero or
//! an infinity, NaNs replaced by the default one. A library, an audio or graphics driver or a
//! start-up flag that sets one of them on one thread changes results on that thread only, so one
//! machine, build or worker computes otherwise than the others. The engine expects the default
//! everywhere it simulates:
//!
//! - **x86-64**: MXCSR rounding to nearest (RC = 00), flush-to-zero (FTZ, bit 15) and
//!   denormals-are-zero (DAZ, bit 6) off, every exception masked (bits 7 to 12). The exception
//!   flags (bits 0 to 5) only record what happened and are ignored.
//! - **aarch64**: FPCR rounding to nearest (RMode = 00), FZ, FZ16, DN, AH and FIZ off, no exception
//!   trapped.
//! - **Any other target** has no check: [`FloatControl::read`] is `None` there.
//!
//! This module owns the register's reading, writing and naming. It must never decide what a
//! change means for a run: [`super::float_guard`] does.

/// The control register of the current thread, as read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatControl(pub u64);

/// One setting of the register: its bits, and what each value means.
struct Field {
    /// The field's bits in the register.
    mask: u64,
    /// The field's name.
    name: &'static str,
}

#[cfg(target_arch = "x86_64")]
mod target {
    use super::Field;

    /// The register's name.
    pub const REGISTER: &str = "MXCSR";
    /// The bits that change results.
    pub const RELEVANT: u64 = 0xffc0;
    /// Their expected values: round to nearest, FTZ and DAZ off, every exception masked.
    pub const EXPECTED: u64 = 0x1f80;
    pub const FIELDS: &[Field] = &[
        Field {
            mask: 0x6000,
            name: "rounding mode (RC)",
        },
        Field {
            mask: 0x8000,
            name: "flush-to-zero (FTZ)",
        },
        Field {
            mask: 0x0040,
            name: "denormals-are-zero (DAZ)",
        },
        Field {
            mask: 0x1f80,
            name: "exception masks",
        },
    ];

    pub fn read() -> Option<u64> {
        let mut value: u32 = 0;
        // SAFETY: `stmxcsr` stores the 32-bit MXCSR to the given address, which is a live `u32`.
        unsafe {
            std::arch::asm!(
                "stmxcsr [{0}]",
                in(reg) &mut value,
                options(nostack, preserves_flags)
            );
        }
        Some(u64::from(value))
    }

    /// # Safety
    ///
    /// Changes how every float operation on this thread rounds and traps from now on.
    pub unsafe fn write(value: u64) {
        let value = value as u32;
        // SAFETY: `ldmxcsr` loads the 32-bit MXCSR from the given address, a live `u32`; the
        // caller accepts the new environment.
        unsafe {
            // rusting: allow(LINT_FLOAT_CONTROL) reason: the guard that puts the default back
            std::arch::asm!(
                "ldmxcsr [{0}]",
                in(reg) &value,
                options(nostack, preserves_flags, readonly)
            );
        }
    }

    /// The rounding mode's name.
    pub fn rounding(value: u64) -> &'static str {
        match (value >> 13) & 3 {
            0 => "to nearest",
            1 => "down (toward -inf)",
            2 => "up (toward +inf)",
            _ => "toward zero",
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod target {
    use super::Field;

    pub const REGISTER: &str = "FPCR";
    /// FIZ, AH, the trap enables, FZ16, RMode, FZ and DN.
    pub const RELEVANT: u64 = 0x03c8_9f03;
    pub const EXPECTED: u64 = 0;
    pub const FIELDS: &[Field] = &[
        Field {
            mask: 0x00c0_0000,
            name: "rounding mode (RMode)",
        },
        Field {
            mask: 0x0100_0000,
            name: "flush-to-zero (FZ)",
        },
        Field {
            mask: 0x0008_0000,
            name: "half-precision flush-to-zero (FZ16)",
        },
        Field {
            mask: 0x0200_0000,
            name: "default NaN (DN)",
        },
        Field {
            mask: 0x0000_0003,
            name: "alternate handling (AH, FIZ)",
        },
        Field {
            mask: 0x0000_9f00,
            name: "exception traps",
        },
    ];

    pub fn read() -> Option<u64> {
        let value: u64;
        // SAFETY: reading FPCR has no effect besides the read.
        unsafe {
            std::arch::asm!("mrs {0}, fpcr", out(reg) value, options(nomem, nostack, preserves_flags));
        }
        Some(value)
    }

    /// # Safety
    ///
    /// Changes how every float operation on this thread rounds and traps from now on.
    pub unsafe fn write(value: u64) {
        // SAFETY: the caller accepts the new environment.
        unsafe {
            // rusting: allow(LINT_FLOAT_CONTROL) reason: the guard that puts the default back
            std::arch::asm!("msr fpcr, {0}", in(reg) value, options(nomem, nostack, preserves_flags));
        }
    }

    pub fn rounding(value: u64) -> &'static str {
        match (value >> 22) & 3 {
            0 => "to nearest",
            1 => "up (toward +inf)",
            2 => "down (toward -inf)",
            _ => "toward zero",
        }
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod target {
    use super::Field;

    pub const REGISTER: &str = "no checked register";
    pub const RELEVANT: u64 = 0;
    pub const EXPECTED: u64 = 0;
    pub const FIELDS: &[Field] = &[];

    pub fn read() -> Option<u64> {
        None
    }

    /// # Safety
    ///
    /// Does nothing on this target.
    pub unsafe fn write(_value: u64) {}

    pub fn rounding(_value: u64) -> &'static str {
        "unknown"
    }
}

impl FloatControl {
    /// The register's name on this target (`MXCSR`, `FPCR`).
    pub const REGISTER: &'static str = target::REGISTER;

    /// The current thread's register; `None` on a target the engine does not check.
    #[inline]
    pub fn read() -> Option<FloatControl> {
        target::read().map(FloatControl)
    }

    /// What the simulation expects, keeping this value's bits that do not change results (the
    /// exception flags).
    pub fn expected_from(self) -> FloatControl {
        FloatControl((self.0 & !target::RELEVANT) | target::EXPECTED)
    }

    /// Whether the bits that change results are as the simulation expects.
    #[inline]
    pub fn is_expected(self) -> bool {
        self.0 & target::RELEVANT == target::EXPECTED
    }

    /// Whether the current thread's register is as the simulation expects (always `true` on a
    /// target without a check). A few nanoseconds.
    #[inline]
    pub fn current_is_expected() -> bool {
        FloatControl::read().is_none_or(FloatControl::is_expected)
    }

    /// Puts this value in the current thread's register.
    ///
    /// # Safety
    ///
    /// Every float operation on this thread rounds, flushes and traps by it from now on; a value
    /// that unmasks an exception makes the next operation that raises it trap.
    pub unsafe fn write(self) {
        // SAFETY: passed on to the caller.
        unsafe { target::write(self.0) }
    }

    /// Puts the expected environment back on the current thread (keeping the exception flags).
    pub fn restore_expected() {
        if let Some(now) = FloatControl::read() {
            // SAFETY: the expected environment is the default every thread starts with.
            unsafe { now.expected_from().write() }
        }
    }

    /// What differs from the expected environment, one phrase a setting: `flush-to-zero (FTZ)
    /// on`, `rounding mode (RC) toward zero`.
    pub fn differences(self) -> Vec<String> {
        target::FIELDS
            .iter()
            .filter(|field| self.0 & field.mask != target::EXPECTED & field.mask)
            .map(|field| {
                if field.name.starts_with("rounding") {
                    format!("{} {}", field.name, target::rounding(self.0))
                } else if field.name.starts_with("exception") {
                    format!("{} changed", field.name)
                } else {
                    format!(
                        "{} {}",
                        field.name,
                        if self.0 & field.mask != 0 {
                            "on"
                        } else {
                            "off"
                        }
                    )
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_starts_with_the_expected_environment() {
        std::thread::spawn(|| {
            assert!(
                FloatControl::current_is_expected(),
                "{:?}",
                FloatControl::read()
            );
        })
        .join()
        .unwrap();
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn changes_are_named_and_restored() {
        std::thread::spawn(|| {
            let before = FloatControl::read().unwrap();
            let ftz = if cfg!(target_arch = "x86_64") {
                0x8000
            } else {
                0x0100_0000
            };
            let rounding = if cfg!(target_arch = "x86_64") {
                0x6000
            } else {
                0x00c0_0000
            };
            // SAFETY: this thread only; put back below.
            unsafe { FloatControl(before.0 | ftz | rounding).write() };
            let tiny = std::hint::black_box(f32::MIN_POSITIVE) * std::hint::black_box(0.5);
            let changed = FloatControl::read().unwrap();
            FloatControl::restore_expected();
            assert_eq!(tiny, 0.0, "a subnormal result is flushed");
            assert!(!changed.is_expected());
            let named = changed.differences();
            assert!(
                named
                    .iter()
                    .any(|d| d.contains("flush-to-zero") && d.ends_with(" on"))
                    && named.iter().any(|d| d.contains("toward zero")),
                "{named:?}"
            );
            assert!(FloatControl::current_is_expected());
            let tiny = std::hint::black_box(f32::MIN_POSITIVE) * std::hint::black_box(0.5);
            assert!(tiny > 0.0);
        })
        .join()
        .unwrap();
    }
}
