//! [`ComputePipeline`]: a compute shader made ready to dispatch over storage buffers.
//!
//! This module owns, per pipeline, the shader module, the descriptor set layout (storage buffers
//! at set 0, bindings `0..n`), the pipeline layout with its push-constant range, one descriptor
//! pool and set, and the pipeline. It must never outlive its [`GpuContext`] (the borrow enforces
//! it) and never rebind its descriptor set while a dispatch runs (the context's submit lock and
//! the wait at the end of each dispatch guarantee that).

use ash::vk;

use super::buffer::GpuBuffer;
use super::context::{DISPATCH_TIMEOUT_SECONDS, GpuContext};
use super::error::GpuError;

const SPIRV_MAGIC: u32 = 0x0723_0203;

/// A compute pipeline with entry point `main`.
pub struct ComputePipeline<'ctx> {
    context: &'ctx GpuContext,
    shader: String,
    module: vk::ShaderModule,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    pipeline: vk::Pipeline,
    storage_buffers: u32,
    push_constant_bytes: u32,
}

/// Vulkan objects made so far, destroyed in reverse if a later step fails.
#[derive(Default)]
struct Partial {
    module: vk::ShaderModule,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pool: vk::DescriptorPool,
}

impl Partial {
    /// Destroys whatever was created, children first.
    ///
    /// # Safety
    ///
    /// Every non-null handle was created from `device` and is not in use.
    unsafe fn destroy(self, device: &ash::Device) {
        // SAFETY: guaranteed by the caller; destroying a null handle is a no-op in Vulkan.
        unsafe {
            device.destroy_descriptor_pool(self.pool, None);
            device.destroy_pipeline_layout(self.layout, None);
            device.destroy_descriptor_set_layout(self.set_layout, None);
            device.destroy_shader_module(self.module, None);
        }
    }
}

impl<'ctx> ComputePipeline<'ctx> {
    pub(crate) fn new(
        context: &'ctx GpuContext,
        shader: &str,
        spirv: &[u32],
        storage_buffers: u32,
        push_constant_bytes: u32,
    ) -> Result<Self, GpuError> {
        if spirv.first() != Some(&SPIRV_MAGIC) {
            return Err(GpuError::NotSpirv {
                shader: shader.to_owned(),
                words: spirv.len(),
            });
        }
        let max = context.limits().max_push_constants_size;
        if !push_constant_bytes.is_multiple_of(4) || push_constant_bytes > max {
            return Err(GpuError::PushConstantLimit {
                bytes: push_constant_bytes,
                max,
            });
        }
        let device = context.device();
        let mut partial = Partial::default();
        match Self::build(
            device,
            context.pipeline_cache(),
            spirv,
            storage_buffers,
            push_constant_bytes,
            &mut partial,
        ) {
            Ok((set, pipeline)) => Ok(Self {
                context,
                shader: shader.to_owned(),
                module: partial.module,
                set_layout: partial.set_layout,
                layout: partial.layout,
                pool: partial.pool,
                set,
                pipeline,
                storage_buffers,
                push_constant_bytes,
            }),
            Err(err) => {
                // SAFETY: every handle in `partial` was created from this device just now and
                // nothing uses it (the pipeline was not created, or creation failed).
                unsafe { partial.destroy(device) };
                Err(err)
            }
        }
    }

    fn build(
        device: &ash::Device,
        cache: vk::PipelineCache,
        spirv: &[u32],
        storage_buffers: u32,
        push_constant_bytes: u32,
        partial: &mut Partial,
    ) -> Result<(vk::DescriptorSet, vk::Pipeline), GpuError> {
        let module_info = vk::ShaderModuleCreateInfo::default().code(spirv);
        // SAFETY: `spirv` starts with the SPIR-V magic number and lives for the call; the driver
        // copies the code.
        partial.module = unsafe { device.create_shader_module(&module_info, None) }
            .map_err(GpuError::vulkan("vkCreateShaderModule"))?;
        let bindings: Vec<vk::DescriptorSetLayoutBinding> = (0..storage_buffers)
            .map(|binding| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(binding)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let set_layout_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        // SAFETY: the bindings array outlives the call.
        partial.set_layout = unsafe { device.create_descriptor_set_layout(&set_layout_info, None) }
            .map_err(GpuError::vulkan("vkCreateDescriptorSetLayout"))?;
        let set_layouts = [partial.set_layout];
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(push_constant_bytes)];
        let mut layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if push_constant_bytes > 0 {
            layout_info = layout_info.push_constant_ranges(&ranges);
        }
        // SAFETY: the set layout was created from this device; the arrays outlive the call.
        partial.layout = unsafe { device.create_pipeline_layout(&layout_info, None) }
            .map_err(GpuError::vulkan("vkCreatePipelineLayout"))?;
        let pool_sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(storage_buffers.max(1))];
        let pool_info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(1)
            .pool_sizes(&pool_sizes);
        // SAFETY: a valid create info for this device.
        partial.pool = unsafe { device.create_descriptor_pool(&pool_info, None) }
            .map_err(GpuError::vulkan("vkCreateDescriptorPool"))?;
        let alloc_info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(partial.pool)
            .set_layouts(&set_layouts);
        // SAFETY: the pool has room for exactly this one set of this layout.
        let set = unsafe { device.allocate_descriptor_sets(&alloc_info) }
            .map_err(GpuError::vulkan("vkAllocateDescriptorSets"))?[0];
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(partial.module)
            .name(c"main");
        let pipeline_info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(partial.layout);
        // SAFETY: the module and layout were created from this device above, and the cache is
        // the context's, alive as long as it is.
        let pipelines =
            unsafe { device.create_compute_pipelines(cache, &[pipeline_info], None) }
                .map_err(|(_, result)| GpuError::vulkan("vkCreateComputePipelines")(result))?;
        Ok((set, pipelines[0]))
    }

    /// The shader's name, as given when the pipeline was made.
    pub fn shader(&self) -> &str {
        &self.shader
    }

    pub(crate) fn context_is(&self, context: &GpuContext) -> bool {
        std::ptr::eq(self.context, context)
    }

    pub(crate) fn check_dispatch(
        &self,
        buffers: &[&GpuBuffer<'_>],
        push_constants: &[u8],
    ) -> Result<(), GpuError> {
        if buffers.len() != self.storage_buffers as usize {
            return Err(GpuError::BindingCount {
                shader: self.shader.clone(),
                expected: self.storage_buffers as usize,
                bound: buffers.len(),
            });
        }
        if push_constants.len() != self.push_constant_bytes as usize {
            return Err(GpuError::PushConstantSize {
                shader: self.shader.clone(),
                expected: self.push_constant_bytes as usize,
                passed: push_constants.len(),
            });
        }
        Ok(())
    }

    /// Points the descriptor set at `buffers`, binding `i` to `buffers[i]`.
    ///
    /// The caller holds the context's submit lock, so no dispatch uses the set meanwhile.
    pub(crate) fn bind_buffers(&self, buffers: &[&GpuBuffer<'_>]) {
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
            .iter()
            .map(|buffer| {
                [vk::DescriptorBufferInfo::default()
                    .buffer(buffer.handle())
                    .offset(0)
                    .range(vk::WHOLE_SIZE)]
            })
            .collect();
        let writes: Vec<vk::WriteDescriptorSet> = infos
            .iter()
            .enumerate()
            .map(|(binding, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(self.set)
                    .dst_binding(binding as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        // SAFETY: the set and the buffers belong to this device; the set is not in use by any
        // pending command buffer (see above), and the info arrays outlive the call.
        unsafe { self.context.device().update_descriptor_sets(&writes, &[]) };
    }

    pub(crate) fn pipeline(&self) -> vk::Pipeline {
        self.pipeline
    }

    pub(crate) fn layout(&self) -> vk::PipelineLayout {
        self.layout
    }

    pub(crate) fn descriptor_set(&self) -> vk::DescriptorSet {
        self.set
    }
}

impl std::fmt::Debug for ComputePipeline<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComputePipeline")
            .field("shader", &self.shader)
            .field("storage_buffers", &self.storage_buffers)
            .field("push_constant_bytes", &self.push_constant_bytes)
            .finish_non_exhaustive()
    }
}

impl Drop for ComputePipeline<'_> {
    fn drop(&mut self) {
        let device = self.context.device();
        // SAFETY: no dispatch is in flight (each waits for completion and borrows the pipeline);
        // the pipeline goes first, then the objects it was built from, in reverse order.
        unsafe {
            device.destroy_pipeline(self.pipeline, None);
            Partial {
                module: self.module,
                set_layout: self.set_layout,
                layout: self.layout,
                pool: self.pool,
            }
            .destroy(device);
        }
    }
}

impl GpuContext {
    /// Creates a compute pipeline from SPIR-V whose entry point `main` reads and writes
    /// `storage_buffers` storage buffers (set 0, bindings 0, 1, ...) and takes
    /// `push_constant_bytes` bytes of push constants.
    pub fn compute_pipeline(
        &self,
        shader: &str,
        spirv: &[u32],
        storage_buffers: u32,
        push_constant_bytes: u32,
    ) -> Result<ComputePipeline<'_>, GpuError> {
        let pipeline =
            ComputePipeline::new(self, shader, spirv, storage_buffers, push_constant_bytes)?;
        self.check_validation("vkCreateComputePipelines")?;
        Ok(pipeline)
    }

    /// Runs `pipeline` over `groups` work groups with `buffers` bound in order and the given push
    /// constants, and waits until it has finished and its writes are visible to the host.
    pub fn dispatch(
        &self,
        pipeline: &ComputePipeline<'_>,
        buffers: &[&GpuBuffer<'_>],
        push_constants: &[u8],
        groups: [u32; 3],
    ) -> Result<(), GpuError> {
        let ours =
            pipeline.context_is(self) && buffers.iter().all(|buffer| buffer.context_is(self));
        if !ours {
            return Err(GpuError::ForeignObject);
        }
        pipeline.check_dispatch(buffers, push_constants)?;
        let _guard = self
            .submit
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        pipeline.bind_buffers(buffers);
        let device = self.device();
        let cmd = self.command_buffer;
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: the submit lock makes this the only user of the command buffer and the fence;
        // the previous submission finished (every dispatch waits for its fence before returning,
        // and the lock is held until then), so the buffer may be reset and re-recorded. Every
        // handle recorded belongs to this device and outlives the wait below (the pipeline and
        // the buffers are borrowed for the whole call).
        unsafe {
            device
                .reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                .map_err(GpuError::vulkan("vkResetCommandBuffer"))?;
            device
                .begin_command_buffer(cmd, &begin)
                .map_err(GpuError::vulkan("vkBeginCommandBuffer"))?;
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline.pipeline());
            device.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                pipeline.layout(),
                0,
                &[pipeline.descriptor_set()],
                &[],
            );
            if !push_constants.is_empty() {
                device.cmd_push_constants(
                    cmd,
                    pipeline.layout(),
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    push_constants,
                );
            }
            device.cmd_dispatch(cmd, groups[0], groups[1], groups[2]);
            let barrier = vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ);
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            );
            device
                .end_command_buffer(cmd)
                .map_err(GpuError::vulkan("vkEndCommandBuffer"))?;
            device
                .reset_fences(&[self.fence])
                .map_err(GpuError::vulkan("vkResetFences"))?;
            let command_buffers = [cmd];
            let submit = vk::SubmitInfo::default().command_buffers(&command_buffers);
            device
                .queue_submit(self.queue, &[submit], self.fence)
                .map_err(GpuError::vulkan("vkQueueSubmit"))?;
            match device.wait_for_fences(
                &[self.fence],
                true,
                DISPATCH_TIMEOUT_SECONDS * 1_000_000_000,
            ) {
                Ok(()) => self.check_validation("dispatch"),
                Err(vk::Result::TIMEOUT) => Err(GpuError::Timeout {
                    seconds: DISPATCH_TIMEOUT_SECONDS,
                }),
                Err(result) => Err(GpuError::vulkan("vkWaitForFences")(result)),
            }
        }
    }
}
