//! [`GpuBuffer`]: a storage buffer in host-visible memory, read and written as 32-bit words.
//!
//! This module owns one buffer and its memory, mapped for as long as it lives. Words are the unit
//! on purpose: simulation data crosses to and from the GPU as raw bits (`f32::to_bits`), so no
//! conversion can touch a NaN payload or a signed zero. It must never outlive its
//! [`GpuContext`] (the borrow enforces it) and never be accessed by the host while a dispatch that
//! binds it runs (dispatches wait for completion before returning, and take the buffers by
//! reference for their whole duration).

use ash::vk;

use super::context::GpuContext;
use super::error::GpuError;

/// A host-visible, host-coherent storage buffer of 32-bit words.
pub struct GpuBuffer<'ctx> {
    context: &'ctx GpuContext,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    mapped: *mut u32,
    len: usize,
}

impl<'ctx> GpuBuffer<'ctx> {
    pub(crate) fn new(context: &'ctx GpuContext, words: usize) -> Result<Self, GpuError> {
        if words == 0 {
            return Err(GpuError::EmptyBuffer);
        }
        let bytes = (words as u64) * 4;
        let device = context.device();
        let info = vk::BufferCreateInfo::default()
            .size(bytes)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: a valid create info with a non-zero size, for this context's device.
        let buffer = unsafe { device.create_buffer(&info, None) }
            .map_err(GpuError::vulkan("vkCreateBuffer"))?;
        // SAFETY: the buffer was just created from this device.
        let requirements = unsafe { device.get_buffer_memory_requirements(buffer) };
        let Some(memory_type) = context.memory_type(
            requirements.memory_type_bits,
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        ) else {
            // SAFETY: the buffer has no memory bound and is not in use.
            unsafe { device.destroy_buffer(buffer, None) };
            return Err(GpuError::NoHostVisibleMemory);
        };
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(requirements.size)
            .memory_type_index(memory_type);
        // SAFETY: the memory type index comes from this device's memory properties.
        let memory = match unsafe { device.allocate_memory(&alloc, None) } {
            Ok(memory) => memory,
            Err(result) => {
                // SAFETY: the buffer has no memory bound and is not in use.
                unsafe { device.destroy_buffer(buffer, None) };
                return Err(GpuError::vulkan("vkAllocateMemory")(result));
            }
        };
        // SAFETY: the memory was allocated for this buffer's requirements, at offset 0, and is
        // host-visible, so it may be bound and then mapped whole.
        let mapped = unsafe {
            device.bind_buffer_memory(buffer, memory, 0).and_then(|()| {
                device.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            })
        };
        let mapped = match mapped {
            Ok(pointer) => pointer,
            Err(result) => {
                // SAFETY: neither object is in use; the buffer goes before its memory.
                unsafe {
                    device.destroy_buffer(buffer, None);
                    device.free_memory(memory, None);
                }
                return Err(GpuError::vulkan("vkBindBufferMemory/vkMapMemory")(result));
            }
        };
        let mut this = Self {
            context,
            buffer,
            memory,
            mapped: mapped.cast::<u32>(),
            len: words,
        };
        this.fill(0);
        Ok(this)
    }

    /// The buffer's length in 32-bit words.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no words (never true: Vulkan has no empty buffers).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes `words` starting at word `offset`.
    pub fn write(&mut self, offset: usize, words: &[u32]) -> Result<(), GpuError> {
        self.check(offset, words.len())?;
        // SAFETY: the range was checked to lie inside the mapping, which stays valid while the
        // buffer lives; `&mut self` means no dispatch reads it now (dispatches borrow the buffer
        // and finish before returning), and the memory is host-coherent, so no flush is needed.
        unsafe {
            std::ptr::copy_nonoverlapping(words.as_ptr(), self.mapped.add(offset), words.len());
        }
        Ok(())
    }

    /// Reads `words` words starting at word `offset`.
    pub fn read(&self, offset: usize, words: usize) -> Result<Vec<u32>, GpuError> {
        self.check(offset, words)?;
        let mut out = vec![0u32; words];
        // SAFETY: the range lies inside the mapping; every dispatch that wrote the buffer has
        // finished and made its writes visible to the host (the dispatch's barrier and fence).
        unsafe {
            std::ptr::copy_nonoverlapping(self.mapped.add(offset), out.as_mut_ptr(), words);
        }
        Ok(out)
    }

    /// Sets every word to `value`.
    pub fn fill(&mut self, value: u32) {
        // SAFETY: the whole mapping is `len` words, exclusively borrowed here.
        unsafe { std::slice::from_raw_parts_mut(self.mapped, self.len) }.fill(value);
    }

    pub(crate) fn context_is(&self, context: &GpuContext) -> bool {
        std::ptr::eq(self.context, context)
    }

    pub(crate) fn handle(&self) -> vk::Buffer {
        self.buffer
    }

    fn check(&self, offset: usize, words: usize) -> Result<(), GpuError> {
        match offset.checked_add(words) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(GpuError::OutOfBounds {
                offset,
                words,
                len: self.len,
            }),
        }
    }
}

impl std::fmt::Debug for GpuBuffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBuffer")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl Drop for GpuBuffer<'_> {
    fn drop(&mut self) {
        let device = self.context.device();
        // SAFETY: no dispatch is in flight (each waits for completion and borrows the buffer);
        // the memory is unmapped before it is freed, and the buffer destroyed before its memory.
        unsafe {
            device.unmap_memory(self.memory);
            device.destroy_buffer(self.buffer, None);
            device.free_memory(self.memory, None);
        }
    }
}

// SAFETY: the raw mapping pointer is only dereferenced through `&self`/`&mut self` methods above,
// which follow Rust's aliasing rules, so the buffer may move to another thread like any owned
// memory; the Vulkan handles are plain integers. It is deliberately not `Sync`: a shared read on
// one thread must not overlap a dispatch that writes the buffer on another.
unsafe impl Send for GpuBuffer<'_> {}

impl GpuContext {
    /// Creates a host-visible storage buffer of `words` 32-bit words, filled with zeros.
    pub fn storage_buffer(&self, words: usize) -> Result<GpuBuffer<'_>, GpuError> {
        GpuBuffer::new(self, words)
    }
}
