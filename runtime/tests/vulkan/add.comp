// A test kernel for the Vulkan driver: one element per invocation, local
// size 64, the element count n as the last buffer. The linear index covers
// 3D grids: x + (grid width in invocations) * (y + grid height * z).
#version 450
layout(local_size_x = 64) in;

// out = a + b
layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { float result[]; };
layout(std430, set = 0, binding = 3) readonly buffer N { uint n; };

uint dlc_index() {
  return gl_GlobalInvocationID.x +
         gl_NumWorkGroups.x * gl_WorkGroupSize.x *
             (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
}

void main() {
  uint i = dlc_index();
  if (i < n)
    result[i] = a[i] + b[i];
}
