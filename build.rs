//! Links the system's shaderc, glslang and SPIRV-Tools statically when the `shader-compiler`
//! feature is on.
//!
//! Debian's `libshaderc.so` lacks glslang and SPIRV-Tools, and linking those dynamically crashes
//! (the packages come from different glslang releases). The static archives from
//! `libshaderc-dev` link and run cleanly, so the `shaderc` crate is built with
//! `prefer-static-linking` and the archives it needs are listed here (`SHADERC_LIB_DIR` overrides
//! where they are looked for). Without the feature this
//! script does nothing, so the default build needs none of these libraries.

use std::env;
use std::path::Path;

/// The static archives, in link order (dependents before their dependencies).
const STATIC_LIBS: [&str; 9] = [
    "SPIRV",
    "glslang",
    "MachineIndependent",
    "GenericCodeGen",
    "OSDependent",
    "OGLCompiler",
    "HLSL",
    "SPIRV-Tools-opt",
    "SPIRV-Tools",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SHADERC_LIB_DIR");
    if env::var_os("CARGO_FEATURE_SHADER_COMPILER").is_none() {
        return;
    }
    let lib_dir = env::var("SHADERC_LIB_DIR").unwrap_or_else(|_| {
        let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_else(|_| "x86_64".to_owned());
        format!("/usr/lib/{arch}-linux-gnu")
    });
    println!("cargo:rustc-link-search=native={lib_dir}");
    // Newer glslang releases fold some of these archives into `glslang`; link what exists.
    for lib in STATIC_LIBS {
        if Path::new(&lib_dir).join(format!("lib{lib}.a")).exists() {
            println!("cargo:rustc-link-lib=static={lib}");
        } else if lib == "glslang" || lib == "SPIRV-Tools" {
            println!(
                "cargo:warning=lib{lib}.a is not in {lib_dir}: install libshaderc-dev \
                 (tools/install-system-packages.sh) or set SHADERC_LIB_DIR"
            );
        }
    }
}
