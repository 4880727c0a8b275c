//! The Khronos validation layer, on request: [`VALIDATION_VARIABLE`] turns it on for every
//! [`super::GpuContext`] the process opens, and a debug messenger collects what it reports.
//!
//! This module owns the messenger and the messages it has collected. The context checks them after
//! it opens and after every dispatch, so a message becomes [`GpuError::Validation`] on the call
//! that raised it (and a test's failure names it). It must never print a message and carry on,
//! and never turn the layer on by itself: without the variable no layer is loaded and nothing here
//! runs.

use std::ffi::{CStr, c_void};
use std::sync::Mutex;

use ash::vk;

use super::error::GpuError;

/// `RUSTING_VULKAN_VALIDATION=1`: open every context with `VK_LAYER_KHRONOS_validation` and fail
/// the call after which it reports a warning or an error. The GPU tests run with it in CI.
pub const VALIDATION_VARIABLE: &str = "RUSTING_VULKAN_VALIDATION";

/// The layer's name, as the loader knows it.
pub const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Whether [`VALIDATION_VARIABLE`] asks for the layer (any value but empty, `0` or `false`).
pub fn requested() -> bool {
    std::env::var(VALIDATION_VARIABLE)
        .is_ok_and(|value| !matches!(value.trim(), "" | "0" | "false"))
}

/// The messages the layer reported and nobody has taken yet. Boxed by the owner, so the address
/// the messenger holds stays put.
#[derive(Debug, Default)]
pub(super) struct Messages(Mutex<Vec<String>>);

impl Messages {
    /// Every message collected since the last call.
    pub(super) fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// `Err(GpuError::Validation)` with every message collected since the last check, after
    /// `call`; `Ok` when there are none.
    pub(super) fn check(&self, call: &'static str) -> Result<(), GpuError> {
        let messages = self.take();
        if messages.is_empty() {
            Ok(())
        } else {
            Err(GpuError::Validation { call, messages })
        }
    }
}

/// A debug messenger feeding a [`Messages`]; destroyed by [`Messenger::destroy`] before the
/// instance.
pub(super) struct Messenger {
    loader: ash::ext::debug_utils::Instance,
    messenger: vk::DebugUtilsMessengerEXT,
    pub(super) messages: Box<Messages>,
}

impl Messenger {
    /// Makes the messenger on `instance`, which was created with [`VALIDATION_LAYER`] and the
    /// debug-utils extension.
    pub(super) fn new(entry: &ash::Entry, instance: &ash::Instance) -> Result<Self, GpuError> {
        let loader = ash::ext::debug_utils::Instance::new(entry, instance);
        let messages = Box::<Messages>::default();
        let info = create_info(&messages);
        // SAFETY: the instance was created with the debug-utils extension; `messages` is boxed
        // and owned by the returned value, which destroys the messenger before dropping it, so
        // the user-data pointer stays valid for as long as the callback can run.
        let messenger = unsafe { loader.create_debug_utils_messenger(&info, None) }
            .map_err(GpuError::vulkan("vkCreateDebugUtilsMessengerEXT"))?;
        Ok(Messenger {
            loader,
            messenger,
            messages,
        })
    }

    /// Sends `text` through the messenger as a validation error, as the layer would: a test of
    /// the path from the callback to [`GpuError::Validation`].
    pub(super) fn submit(&self, text: &CStr) {
        let data = vk::DebugUtilsMessengerCallbackDataEXT::default()
            .message_id_name(c"rusting-test")
            .message(text);
        // SAFETY: the messenger's instance is alive and `data` and its strings outlive the call.
        unsafe {
            self.loader.submit_debug_utils_message(
                vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
                vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION,
                &data,
            )
        };
    }

    /// Destroys the messenger; call it before destroying the instance.
    pub(super) fn destroy(&self) {
        // SAFETY: the messenger was made from this loader's instance, which is still alive, and
        // is destroyed once (the context calls this in its `Drop`, or on a failed open).
        unsafe {
            self.loader
                .destroy_debug_utils_messenger(self.messenger, None)
        };
    }
}

/// The create info for a messenger of warnings and errors of every type into `messages`; chained
/// into the instance's create info too, so instance creation itself is checked.
pub(super) fn create_info(messages: &Messages) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(collect))
        .user_data(messages as *const Messages as *mut c_void)
}

/// The messenger's callback: one line per message (severity, message id, text) into the
/// [`Messages`] behind `user_data`.
unsafe extern "system" fn collect(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user_data.is_null() {
        return vk::FALSE;
    }
    // SAFETY: the layer passes callback data valid for this call, and `user_data` is the boxed
    // `Messages` the messenger was created with, alive until the messenger is destroyed.
    let (data, messages) = unsafe { (&*data, &*(user_data as *const Messages)) };
    let text = |pointer: *const std::ffi::c_char| {
        if pointer.is_null() {
            String::new()
        } else {
            // SAFETY: the layer's id name and message are null-terminated strings valid for the
            // call, and this one is not null.
            unsafe { CStr::from_ptr(pointer) }
                .to_string_lossy()
                .into_owned()
        }
    };
    let level = if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        "error"
    } else {
        "warning"
    };
    let line = format!(
        "{level} {}: {}",
        text(data.p_message_id_name),
        text(data.p_message)
    );
    messages
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(line);
    vk::FALSE
}
