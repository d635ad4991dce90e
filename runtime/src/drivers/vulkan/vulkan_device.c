/*===- vulkan_device.c - the loader, the instance and the devices ---------===*
 *
 * libvulkan.so.1 is opened with dlopen and everything else is resolved
 * through vkGetInstanceProcAddr / vkGetDeviceProcAddr, so the runtime has no
 * link-time dependency on Vulkan. A device enables exactly the optional
 * features that artifacts may ask for (DLCX_FEATURE_VK_*) and that it
 * offers, so that the validation layer catches a kernel that uses more than
 * its artifact declared.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#if defined(DLC_RUNTIME_NO_DLOPEN)
#error                                                                         \
    "the Vulkan driver opens libvulkan with dlopen: leave it out of builds without a dynamic loader"
#endif

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_device.h"

#define DLC_VK_VERSION(major, minor) VK_MAKE_VERSION(major, minor, 0)
#define DLC_VK_VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

/* Device extensions for features that became core after Vulkan 1.1. */
enum {
  DLC_VK_EXT_FLOAT16_INT8 = 1u << 0, /* core in 1.2 */
  DLC_VK_EXT_8BIT_STORAGE = 1u << 1, /* core in 1.2 */
  DLC_VK_EXT_DOT_PRODUCT = 1u << 2   /* core in 1.3 */
};

static const struct {
  const char *name;
  uint32_t core_version;
} dlc_vk_extensions[] = {
    {"VK_KHR_shader_float16_int8", DLC_VK_VERSION(1, 2)},
    {"VK_KHR_8bit_storage", DLC_VK_VERSION(1, 2)},
    {"VK_KHR_shader_integer_dot_product", DLC_VK_VERSION(1, 3)}};
#define DLC_VK_EXTENSION_COUNT 3u

/* Subgroup operations DLCX_FEATURE_VK_SUBGROUP promises, in compute: what
 * dlc-compile's +subgroup enables (GroupNonUniform, its Arithmetic and
 * Shuffle capabilities). */
#define DLC_VK_SUBGROUP_OPS                                                    \
  (VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |        \
   VK_SUBGROUP_FEATURE_SHUFFLE_BIT)

const char *dlc_vk_result_name(VkResult result) {
  switch (result) {
  case VK_SUCCESS:
    return "VK_SUCCESS";
  case VK_NOT_READY:
    return "VK_NOT_READY";
  case VK_TIMEOUT:
    return "VK_TIMEOUT";
  case VK_INCOMPLETE:
    return "VK_INCOMPLETE";
  case VK_ERROR_OUT_OF_HOST_MEMORY:
    return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case VK_ERROR_INITIALIZATION_FAILED:
    return "VK_ERROR_INITIALIZATION_FAILED";
  case VK_ERROR_DEVICE_LOST:
    return "VK_ERROR_DEVICE_LOST";
  case VK_ERROR_MEMORY_MAP_FAILED:
    return "VK_ERROR_MEMORY_MAP_FAILED";
  case VK_ERROR_LAYER_NOT_PRESENT:
    return "VK_ERROR_LAYER_NOT_PRESENT";
  case VK_ERROR_EXTENSION_NOT_PRESENT:
    return "VK_ERROR_EXTENSION_NOT_PRESENT";
  case VK_ERROR_FEATURE_NOT_PRESENT:
    return "VK_ERROR_FEATURE_NOT_PRESENT";
  case VK_ERROR_INCOMPATIBLE_DRIVER:
    return "VK_ERROR_INCOMPATIBLE_DRIVER";
  case VK_ERROR_TOO_MANY_OBJECTS:
    return "VK_ERROR_TOO_MANY_OBJECTS";
  case VK_ERROR_OUT_OF_POOL_MEMORY:
    return "VK_ERROR_OUT_OF_POOL_MEMORY";
  case VK_ERROR_INVALID_SHADER_NV:
    return "VK_ERROR_INVALID_SHADER_NV";
  default:
    return "an unknown VkResult";
  }
}

dlc_status_t dlc_vk_status(VkResult result) {
  return result == VK_ERROR_OUT_OF_HOST_MEMORY ||
                 result == VK_ERROR_OUT_OF_DEVICE_MEMORY
             ? DLC_ERROR_OUT_OF_MEMORY
             : DLC_ERROR_DEVICE;
}

const char *dlc_vk_feature_name(uint64_t feature) {
  switch (feature) {
  case DLCX_FEATURE_VK_FLOAT16:
    return "shaderFloat16 and storageBuffer16BitAccess";
  case DLCX_FEATURE_VK_INT8_STORAGE:
    return "shaderInt8 and storageBuffer8BitAccess";
  case DLCX_FEATURE_VK_INT8_DOT:
    return "shaderIntegerDotProduct on Vulkan 1.3 (SPIR-V 1.6)";
  case DLCX_FEATURE_VK_SUBGROUP:
    return "basic, arithmetic and shuffle subgroup operations in compute "
           "shaders, subgroups of at least 8 invocations";
  case DLCX_FEATURE_VK_INT64:
    return "shaderInt64";
  case DLCX_FEATURE_VK_FLOAT64:
    return "shaderFloat64";
  }
  return "an unknown feature";
}

int dlc_vk_memory_type(const dlc_vk_device_t *device, uint32_t type_bits,
                       VkMemoryPropertyFlags required,
                       VkMemoryPropertyFlags preferred) {
  const VkPhysicalDeviceMemoryProperties *m = &device->memory;
  int pass;
  uint32_t i;
  for (pass = 0; pass < 2; ++pass) {
    VkMemoryPropertyFlags want = pass == 0 ? required | preferred : required;
    for (i = 0; i < m->memoryTypeCount; ++i)
      if ((type_bits & (1u << i)) &&
          (m->memoryTypes[i].propertyFlags & want) == want)
        return (int)i;
  }
  return -1;
}

/* dlsym, with the object-to-function pointer conversion ISO C lacks. */
static PFN_vkGetInstanceProcAddr dlc_vk_entry(void *library) {
  PFN_vkGetInstanceProcAddr fn = NULL;
  void *symbol = dlsym(library, "vkGetInstanceProcAddr");
  memcpy(&fn, &symbol, sizeof(fn));
  return symbol ? fn : NULL;
}

/*===--- validation messages --------------------------------------------===*/

static VKAPI_ATTR VkBool32 VKAPI_CALL dlc_vk_on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity,
    VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  dlc_vk_driver_t *vk = (dlc_vk_driver_t *)user;
  int severe = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
  int validation =
      (types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT) != 0;
  int error = severe && validation;
  const char *text = data && data->pMessage ? data->pMessage : "(no text)";
  /* Printed as they arrive: errors during destruction (leaks) have no call
   * left to fail, and tests look for "validation error" in the output. The
   * loader's own warnings ("adding layers from VK_INSTANCE_LAYERS") are
   * noise. */
  if (validation || severe)
    fprintf(stderr, "dlc vulkan: %s: %s\n",
            error    ? "validation error"
            : severe ? "error"
                     : "validation warning",
            text);
  if (error) {
    dlc_mutex_lock(&vk->validation_lock);
    if (vk->validation_errors++ == vk->validation_reported)
      snprintf(vk->validation_first, sizeof(vk->validation_first), "%s", text);
    dlc_mutex_unlock(&vk->validation_lock);
  }
  return VK_FALSE;
}

dlc_status_t dlc_vk_validation_check(dlc_vk_driver_t *vk,
                                     dlc_message_t *message) {
  dlc_status_t status = DLC_OK;
  if (!vk->validate)
    return DLC_OK;
  dlc_mutex_lock(&vk->validation_lock);
  if (vk->validation_errors != vk->validation_reported) {
    status = dlc_message_set(
        message, DLC_ERROR_DEVICE,
        "Vulkan validation: %" PRIu32 " error(s), the first: %s",
        vk->validation_errors - vk->validation_reported, vk->validation_first);
    vk->validation_reported = vk->validation_errors;
  }
  dlc_mutex_unlock(&vk->validation_lock);
  return status;
}

/*===--- the instance ---------------------------------------------------===*/

int dlc_vk_driver_init(dlc_vk_driver_t *vk) {
  if (!dlc_mutex_init(&vk->lock))
    return 0;
  if (!dlc_mutex_init(&vk->validation_lock)) {
    dlc_mutex_destroy(&vk->lock);
    return 0;
  }
  return 1;
}

static void dlc_vk_close_instance(dlc_vk_driver_t *vk) {
  uint32_t i;
  for (i = 0; i < vk->device_count; ++i) {
    dlc_vk_device_t *d = &vk->devices[i];
    if (d->device)
      d->fn.vkDestroyDevice(d->device, NULL);
    dlc_mutex_destroy(&d->queue_lock);
  }
  vk->allocator.free(vk->allocator.self, vk->devices);
  vk->devices = NULL;
  vk->device_count = 0;
  if (vk->messenger)
    vk->destroy_messenger(vk->instance, vk->messenger, NULL);
  vk->messenger = VK_NULL_HANDLE;
  /* vkDestroyInstance is resolved first: NULL only if the loader lacks it. */
  if (vk->instance && vk->fn.vkDestroyInstance)
    vk->fn.vkDestroyInstance(vk->instance, NULL);
  vk->instance = VK_NULL_HANDLE;
  memset(&vk->fn, 0, sizeof(vk->fn));
  if (vk->library)
    dlclose(vk->library);
  vk->library = NULL;
}

void dlc_vk_driver_fini(dlc_vk_driver_t *vk) {
  dlc_vk_close_instance(vk);
  vk->allocator.free(vk->allocator.self, vk->library_path);
  vk->allocator.free(vk->allocator.self, vk->device_filter);
  dlc_mutex_destroy(&vk->validation_lock);
  dlc_mutex_destroy(&vk->lock);
}

/* Whether `name` is among the instance layers, or the instance extensions
 * (of `layer`, or of the implementation when NULL). */
static dlc_status_t dlc_vk_instance_has(dlc_vk_driver_t *vk,
                                        PFN_vkGetInstanceProcAddr entry,
                                        int layers, const char *layer,
                                        const char *name, int *out_found,
                                        dlc_message_t *message) {
  PFN_vkEnumerateInstanceLayerProperties enum_layers =
      (PFN_vkEnumerateInstanceLayerProperties)entry(
          NULL, "vkEnumerateInstanceLayerProperties");
  PFN_vkEnumerateInstanceExtensionProperties enum_extensions =
      (PFN_vkEnumerateInstanceExtensionProperties)entry(
          NULL, "vkEnumerateInstanceExtensionProperties");
  size_t item =
      layers ? sizeof(VkLayerProperties) : sizeof(VkExtensionProperties);
  uint32_t count = 0, i;
  uint8_t *items;
  VkResult result;
  *out_found = 0;
  if (!enum_layers || !enum_extensions)
    return DLC_OK;
  result =
      layers ? enum_layers(&count, NULL) : enum_extensions(layer, &count, NULL);
  if (result != VK_SUCCESS || count == 0)
    return DLC_OK;
  items = (uint8_t *)vk->allocator.alloc(vk->allocator.self, count * item, 16);
  if (!items)
    return dlc_message_set(
        message, DLC_ERROR_OUT_OF_MEMORY,
        "cannot allocate %" PRIu32 " Vulkan layer or extension names", count);
  result = layers
               ? enum_layers(&count, (VkLayerProperties *)items)
               : enum_extensions(layer, &count, (VkExtensionProperties *)items);
  for (i = 0; result >= 0 && i < count && !*out_found; ++i)
    *out_found =
        strcmp(layers ? ((VkLayerProperties *)items)[i].layerName
                      : ((VkExtensionProperties *)items)[i].extensionName,
               name) == 0;
  vk->allocator.free(vk->allocator.self, items);
  return DLC_OK;
}

/* Asks a physical device what it offers; fills everything but the
 * VkDevice. */
static dlc_status_t dlc_vk_query_device(dlc_vk_driver_t *vk,
                                        uint32_t instance_version,
                                        uint64_t mask, int force_staging,
                                        dlc_vk_device_t *d,
                                        dlc_message_t *message) {
  VkPhysicalDeviceFeatures2 features;
  VkPhysicalDevice16BitStorageFeaturesKHR storage16;
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR float16_int8;
  VkPhysicalDevice8BitStorageFeaturesKHR storage8;
#if defined(VK_KHR_shader_integer_dot_product)
  VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR dot;
#endif
  VkPhysicalDeviceSubgroupProperties subgroup;
  VkPhysicalDeviceDriverProperties driver;
  VkPhysicalDeviceProperties2 properties;
  VkQueueFamilyProperties *families;
  void **next = &features.pNext;
  uint32_t available = 0, count = 0, i;
  int unified = 0;

  vk->fn.vkGetPhysicalDeviceProperties(d->physical, &d->properties);
  vk->fn.vkGetPhysicalDeviceMemoryProperties(d->physical, &d->memory);
  d->api_version = d->properties.apiVersion < instance_version
                       ? d->properties.apiVersion
                       : instance_version;
  d->api_version = VK_MAKE_VERSION(VK_VERSION_MAJOR(d->api_version),
                                   VK_VERSION_MINOR(d->api_version), 0);
  d->queue_family = UINT32_MAX;
  if (d->api_version < DLC_VK_VERSION(1, 1))
    return DLC_OK; /* refused when selected, with the version in the message */

  /* Extensions matter only for features that are not core yet. */
  if (d->api_version < DLC_VK_VERSION(1, 3) &&
      vk->fn.vkEnumerateDeviceExtensionProperties(d->physical, NULL, &count,
                                                  NULL) == VK_SUCCESS &&
      count) {
    VkExtensionProperties *list = (VkExtensionProperties *)vk->allocator.alloc(
        vk->allocator.self, count * sizeof(VkExtensionProperties), 16);
    if (!list)
      return dlc_message_set(
          message, DLC_ERROR_OUT_OF_MEMORY,
          "cannot allocate %" PRIu32 " Vulkan extension names", count);
    if (vk->fn.vkEnumerateDeviceExtensionProperties(d->physical, NULL, &count,
                                                    list) >= 0)
      for (i = 0; i < count; ++i) {
        uint32_t e;
        for (e = 0; e < DLC_VK_EXTENSION_COUNT; ++e)
          if (strcmp(list[i].extensionName, dlc_vk_extensions[e].name) == 0)
            available |= 1u << e;
      }
    vk->allocator.free(vk->allocator.self, list);
  }
  for (i = 0; i < DLC_VK_EXTENSION_COUNT; ++i)
    if (d->api_version >= dlc_vk_extensions[i].core_version)
      available |= 1u << i;

  memset(&features, 0, sizeof(features));
  memset(&storage16, 0, sizeof(storage16));
  memset(&float16_int8, 0, sizeof(float16_int8));
  memset(&storage8, 0, sizeof(storage8));
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  storage16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  *next = &storage16;
  next = &storage16.pNext;
  float16_int8.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR;
  if (available & DLC_VK_EXT_FLOAT16_INT8) {
    *next = &float16_int8;
    next = &float16_int8.pNext;
  }
  storage8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR;
  if (available & DLC_VK_EXT_8BIT_STORAGE) {
    *next = &storage8;
    next = &storage8.pNext;
  }
#if defined(VK_KHR_shader_integer_dot_product)
  memset(&dot, 0, sizeof(dot));
  dot.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR;
  if (available & DLC_VK_EXT_DOT_PRODUCT) {
    *next = &dot;
    next = &dot.pNext;
  }
#endif
  vk->fn.vkGetPhysicalDeviceFeatures2(d->physical, &features);

  memset(&subgroup, 0, sizeof(subgroup));
  memset(&driver, 0, sizeof(driver));
  memset(&properties, 0, sizeof(properties));
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  properties.pNext = &subgroup;
  /* Which driver (core in 1.2): lavapipe bounds loop iterations. */
  if (d->api_version >= DLC_VK_VERSION(1, 2))
    subgroup.pNext = &driver;
  vk->fn.vkGetPhysicalDeviceProperties2(d->physical, &properties);
  d->loop_iteration_limit =
      driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE ? 65535u : 0u;

  d->features = 0;
  if (storage16.storageBuffer16BitAccess && float16_int8.shaderFloat16)
    d->features |= DLCX_FEATURE_VK_FLOAT16;
  if (storage8.storageBuffer8BitAccess && float16_int8.shaderInt8)
    d->features |= DLCX_FEATURE_VK_INT8_STORAGE;
#if defined(VK_KHR_shader_integer_dot_product)
  /* +dot8 kernels are SPIR-V 1.6, which needs Vulkan 1.3. */
  if (dot.shaderIntegerDotProduct && d->api_version >= DLC_VK_VERSION(1, 3))
    d->features |= DLCX_FEATURE_VK_INT8_DOT;
#endif
  /* +subgroup kernels share row reductions among 8 lanes with shuffles
   * that must stay inside one subgroup. */
  if ((subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
      (subgroup.supportedOperations & DLC_VK_SUBGROUP_OPS) ==
          DLC_VK_SUBGROUP_OPS &&
      subgroup.subgroupSize >= DLCX_MIN_SUBGROUP_SIZE)
    d->features |= DLCX_FEATURE_VK_SUBGROUP;
  if (features.features.shaderInt64)
    d->features |= DLCX_FEATURE_VK_INT64;
  if (features.features.shaderFloat64)
    d->features |= DLCX_FEATURE_VK_FLOAT64;
  d->features &= ~mask;
  d->extensions = 0;
  if (d->features & (DLCX_FEATURE_VK_FLOAT16 | DLCX_FEATURE_VK_INT8_STORAGE))
    d->extensions |= DLC_VK_EXT_FLOAT16_INT8;
  if (d->features & DLCX_FEATURE_VK_INT8_STORAGE)
    d->extensions |= DLC_VK_EXT_8BIT_STORAGE;
  if (d->features & DLCX_FEATURE_VK_INT8_DOT)
    d->extensions |= DLC_VK_EXT_DOT_PRODUCT;

  /* The first compute queue family, preferring one with timestamps. */
  vk->fn.vkGetPhysicalDeviceQueueFamilyProperties(d->physical, &count, NULL);
  families = (VkQueueFamilyProperties *)vk->allocator.alloc(
      vk->allocator.self, (count ? count : 1) * sizeof(*families), 16);
  if (!families)
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate %" PRIu32 " queue families", count);
  vk->fn.vkGetPhysicalDeviceQueueFamilyProperties(d->physical, &count,
                                                  families);
  for (i = 0; i < count; ++i)
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
        families[i].queueCount > 0 &&
        (d->queue_family == UINT32_MAX ||
         (d->timestamp_bits == 0 && families[i].timestampValidBits > 0))) {
      d->queue_family = i;
      d->timestamp_bits = families[i].timestampValidBits;
    }
  vk->allocator.free(vk->allocator.self, families);

  /* Integrated GPUs and CPUs share memory with the host: no staging. */
  if (d->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
      d->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
    unified = dlc_vk_memory_type(d, UINT32_MAX,
                                 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                     VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                 0) >= 0;
  d->staging = force_staging || !unified;
  return DLC_OK;
}

/* Opens the loader and creates the instance; on failure leaves nothing
 * behind. Called with the lock held. */
static dlc_status_t dlc_vk_open_instance(dlc_vk_driver_t *vk,
                                         dlc_message_t *message) {
  const char *path = vk->library_path;
  PFN_vkGetInstanceProcAddr entry;
  PFN_vkEnumerateInstanceVersion enum_version;
  PFN_vkCreateInstance create_instance;
  PFN_vkCreateDebugUtilsMessengerEXT create_messenger = NULL;
  VkApplicationInfo app;
  VkInstanceCreateInfo info;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info;
  const char *layer = DLC_VK_VALIDATION_LAYER;
  const char *extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkPhysicalDevice *physical = NULL;
  uint32_t version = DLC_VK_VERSION(1, 0), count = 0, i;
  dlc_status_t status = DLC_OK;
  VkResult result = VK_SUCCESS;

  memset(&messenger_info, 0, sizeof(messenger_info));

  if (!path)
    path = "libvulkan.so.1";
  vk->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!vk->library) {
    const char *why = dlerror();
    return dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                           "Vulkan is not available: cannot load the Vulkan "
                           "loader '%s' (%s); install libvulkan1 and a Vulkan "
                           "driver",
                           path, why ? why : "dlopen failed");
  }
  entry = dlc_vk_entry(vk->library);
  if (!entry) {
    dlc_vk_close_instance(vk);
    return dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                           "Vulkan is not available: '%s' has no "
                           "vkGetInstanceProcAddr",
                           path);
  }
  enum_version =
      (PFN_vkEnumerateInstanceVersion)entry(NULL, "vkEnumerateInstanceVersion");
  create_instance = (PFN_vkCreateInstance)entry(NULL, "vkCreateInstance");
  if (enum_version && enum_version(&version) != VK_SUCCESS)
    version = DLC_VK_VERSION(1, 0);
  if (!create_instance || version < DLC_VK_VERSION(1, 1)) {
    dlc_vk_close_instance(vk);
    return dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                           "Vulkan is not available: the loader '%s' "
                           "supports Vulkan %u.%u, dlc needs 1.1",
                           path, (unsigned)VK_VERSION_MAJOR(version),
                           (unsigned)VK_VERSION_MINOR(version));
  }
  if (version > DLC_VK_VERSION(1, 3))
    version = DLC_VK_VERSION(1, 3);
  version =
      VK_MAKE_VERSION(VK_VERSION_MAJOR(version), VK_VERSION_MINOR(version), 0);

  memset(&app, 0, sizeof(app));
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "dlc";
  app.pEngineName = "dlc";
  app.engineVersion =
      VK_MAKE_VERSION(DLC_RUNTIME_VERSION_MAJOR, DLC_RUNTIME_VERSION_MINOR,
                      DLC_RUNTIME_VERSION_PATCH);
  app.apiVersion = version;
  memset(&info, 0, sizeof(info));
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app;

  if (vk->validate) {
    int has_layer = 0, has_extension = 0;
    status =
        dlc_vk_instance_has(vk, entry, 1, NULL, layer, &has_layer, message);
    if (status == DLC_OK)
      status = dlc_vk_instance_has(vk, entry, 0, NULL, extension,
                                   &has_extension, message);
    if (status == DLC_OK && !has_extension && has_layer)
      status = dlc_vk_instance_has(vk, entry, 0, layer, extension,
                                   &has_extension, message);
    if (status == DLC_OK && !has_extension)
      status = dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                               "validation was asked for, but the instance "
                               "extension %s is missing",
                               extension);
    if (status != DLC_OK) {
      dlc_vk_close_instance(vk);
      return status;
    }
    /* The layer may also come from VK_INSTANCE_LAYERS; naming it twice is
     * fine. */
    info.enabledLayerCount = has_layer ? 1 : 0;
    info.ppEnabledLayerNames = &layer;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = &extension;
    messenger_info.sType =
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    messenger_info.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger_info.messageType =
        VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
        VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
        VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger_info.pfnUserCallback = dlc_vk_on_message;
    messenger_info.pUserData = vk;
    /* Also covers vkCreateInstance and vkDestroyInstance themselves. */
    info.pNext = &messenger_info;
  }

  result = create_instance(&info, NULL, &vk->instance);
  if (result != VK_SUCCESS) {
    vk->instance = VK_NULL_HANDLE;
    dlc_vk_close_instance(vk);
    return dlc_message_set(
        message,
        result == VK_ERROR_OUT_OF_HOST_MEMORY ? DLC_ERROR_OUT_OF_MEMORY
                                              : DLC_ERROR_UNAVAILABLE,
        "Vulkan is not available: vkCreateInstance returned %s%s",
        dlc_vk_result_name(result),
        result == VK_ERROR_INCOMPATIBLE_DRIVER
            ? " (no Vulkan driver is installed, or none supports 1.1)"
            : "");
  }
#define DLC_VK_RESOLVE(name)                                                   \
  if (status == DLC_OK &&                                                      \
      !(vk->fn.name = (PFN_##name)entry(vk->instance, #name)))                 \
    status = dlc_message_set(message, DLC_ERROR_UNAVAILABLE,                   \
                             "Vulkan is not available: the loader '%s' "       \
                             "lacks " #name,                                   \
                             path);
  DLC_VK_INSTANCE_FUNCTIONS(DLC_VK_RESOLVE)
#undef DLC_VK_RESOLVE
  if (status == DLC_OK && vk->validate) {
    create_messenger = (PFN_vkCreateDebugUtilsMessengerEXT)entry(
        vk->instance, "vkCreateDebugUtilsMessengerEXT");
    vk->destroy_messenger = (PFN_vkDestroyDebugUtilsMessengerEXT)entry(
        vk->instance, "vkDestroyDebugUtilsMessengerEXT");
    if (!create_messenger || !vk->destroy_messenger ||
        create_messenger(vk->instance, &messenger_info, NULL, &vk->messenger) !=
            VK_SUCCESS) {
      vk->messenger = VK_NULL_HANDLE;
      status = dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                               "validation was asked for, but the debug "
                               "messenger cannot be created");
    }
  }
  if (status == DLC_OK && ((result = vk->fn.vkEnumeratePhysicalDevices(
                                vk->instance, &count, NULL)) != VK_SUCCESS ||
                           count == 0))
    status = dlc_message_set(
        message, DLC_ERROR_UNAVAILABLE,
        "Vulkan is not available: no Vulkan device (%s); install a Vulkan "
        "driver for the GPU, or Mesa's lavapipe for the CPU",
        result != VK_SUCCESS ? dlc_vk_result_name(result)
                             : "the loader found none");
  if (status == DLC_OK) {
    physical = (VkPhysicalDevice *)vk->allocator.alloc(
        vk->allocator.self, count * sizeof(VkPhysicalDevice), 16);
    vk->devices = (dlc_vk_device_t *)vk->allocator.alloc(
        vk->allocator.self, count * sizeof(dlc_vk_device_t), 16);
    if (!physical || !vk->devices)
      status =
          dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                          "cannot allocate %" PRIu32 " Vulkan devices", count);
  }
  if (status == DLC_OK) {
    result = vk->fn.vkEnumeratePhysicalDevices(vk->instance, &count, physical);
    if (result < 0)
      status = dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                               "Vulkan is not available: "
                               "vkEnumeratePhysicalDevices returned %s",
                               dlc_vk_result_name(result));
  }
  for (i = 0; status == DLC_OK && i < count; ++i) {
    dlc_vk_device_t *d = &vk->devices[i];
    memset(d, 0, sizeof(*d));
    if (!dlc_mutex_init(&d->queue_lock)) {
      status =
          dlc_message_set(message, DLC_ERROR_DEVICE, "cannot create a mutex");
      break;
    }
    vk->device_count = i + 1;
    d->physical = physical[i];
    status = dlc_vk_query_device(vk, version,
                                 vk->masked_features & DLC_VK_FEATURE_MASK,
                                 vk->force_staging, d, message);
  }
  vk->allocator.free(vk->allocator.self, physical);
  if (status != DLC_OK)
    dlc_vk_close_instance(vk);
  return status;
}

dlc_status_t dlc_vk_select(dlc_vk_driver_t *vk, uint32_t index,
                           dlc_message_t *message,
                           dlc_vk_device_t **out_device) {
  const char *filter = vk->device_filter;
  dlc_vk_device_t *d = NULL;
  dlc_status_t status = DLC_OK;
  uint32_t i, matches = 0;

  dlc_mutex_lock(&vk->lock);
  if (!vk->instance)
    status = dlc_vk_open_instance(vk, message);
  for (i = 0; status == DLC_OK && i < vk->device_count && !d; ++i)
    if (!filter || strstr(vk->devices[i].properties.deviceName, filter))
      if (matches++ == index)
        d = &vk->devices[i];
  if (status == DLC_OK && !d) {
    char names[256];
    size_t used = 0;
    names[0] = '\0';
    for (i = 0; i < vk->device_count && used < sizeof(names); ++i) {
      int n = snprintf(names + used, sizeof(names) - used, "%s'%s'",
                       i ? ", " : "", vk->devices[i].properties.deviceName);
      used += n > 0 ? (size_t)n : 0;
    }
    status = dlc_message_set(
        message, DLC_ERROR_UNAVAILABLE,
        "device_index %" PRIu32 ": there are %" PRIu32
        " Vulkan devices%s%s%s (%s)",
        index, matches, filter ? " whose name contains '" : "",
        filter ? filter : "", filter ? "' (the device filter)" : "", names);
  }
  if (status == DLC_OK && d->api_version < DLC_VK_VERSION(1, 1))
    status = dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                             "Vulkan device '%s' supports Vulkan %u.%u, dlc "
                             "needs 1.1",
                             d->properties.deviceName,
                             (unsigned)VK_VERSION_MAJOR(d->api_version),
                             (unsigned)VK_VERSION_MINOR(d->api_version));
  if (status == DLC_OK && d->queue_family == UINT32_MAX)
    status = dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                             "Vulkan device '%s' has no compute queue",
                             d->properties.deviceName);
  dlc_mutex_unlock(&vk->lock);
  if (status == DLC_OK)
    *out_device = d;
  return status;
}

/* Creates the device; called with the lock held. */
static dlc_status_t dlc_vk_create_device(dlc_vk_driver_t *vk,
                                         dlc_vk_device_t *d,
                                         dlc_message_t *message) {
  const float priority = 1.0f;
  const char *names[DLC_VK_EXTENSION_COUNT];
  VkDeviceQueueCreateInfo queue;
  VkDeviceCreateInfo info;
  VkPhysicalDeviceFeatures2 features;
  VkPhysicalDevice16BitStorageFeaturesKHR storage16;
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR float16_int8;
  VkPhysicalDevice8BitStorageFeaturesKHR storage8;
#if defined(VK_KHR_shader_integer_dot_product)
  VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR dot;
#endif
  void **next = &features.pNext;
  uint32_t i, name_count = 0;
  dlc_status_t status = DLC_OK;
  VkResult result;

  memset(&features, 0, sizeof(features));
  memset(&storage16, 0, sizeof(storage16));
  memset(&float16_int8, 0, sizeof(float16_int8));
  memset(&storage8, 0, sizeof(storage8));
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.features.shaderInt64 = (d->features & DLCX_FEATURE_VK_INT64) != 0;
  features.features.shaderFloat64 =
      (d->features & DLCX_FEATURE_VK_FLOAT64) != 0;
  storage16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  storage16.storageBuffer16BitAccess =
      (d->features & DLCX_FEATURE_VK_FLOAT16) != 0;
  *next = &storage16;
  next = &storage16.pNext;
  if (d->extensions & DLC_VK_EXT_FLOAT16_INT8) {
    float16_int8.sType =
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR;
    float16_int8.shaderFloat16 = (d->features & DLCX_FEATURE_VK_FLOAT16) != 0;
    float16_int8.shaderInt8 = (d->features & DLCX_FEATURE_VK_INT8_STORAGE) != 0;
    *next = &float16_int8;
    next = &float16_int8.pNext;
  }
  if (d->extensions & DLC_VK_EXT_8BIT_STORAGE) {
    storage8.sType =
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR;
    storage8.storageBuffer8BitAccess = VK_TRUE;
    *next = &storage8;
    next = &storage8.pNext;
  }
#if defined(VK_KHR_shader_integer_dot_product)
  if (d->extensions & DLC_VK_EXT_DOT_PRODUCT) {
    memset(&dot, 0, sizeof(dot));
    dot.sType =
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR;
    dot.shaderIntegerDotProduct = VK_TRUE;
    *next = &dot;
    next = &dot.pNext;
  }
#endif
  for (i = 0; i < DLC_VK_EXTENSION_COUNT; ++i)
    if ((d->extensions & (1u << i)) &&
        d->api_version < dlc_vk_extensions[i].core_version)
      names[name_count++] = dlc_vk_extensions[i].name;

  memset(&queue, 0, sizeof(queue));
  queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue.queueFamilyIndex = d->queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  memset(&info, 0, sizeof(info));
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  info.enabledExtensionCount = name_count;
  info.ppEnabledExtensionNames = name_count ? names : NULL;
  result = vk->fn.vkCreateDevice(d->physical, &info, NULL, &d->device);
  if (result != VK_SUCCESS) {
    d->device = VK_NULL_HANDLE;
    return dlc_message_set(
        message, dlc_vk_status(result), "vkCreateDevice for '%s' failed: %s",
        d->properties.deviceName, dlc_vk_result_name(result));
  }
#define DLC_VK_RESOLVE(name)                                                   \
  if (status == DLC_OK &&                                                      \
      !(d->fn.name =                                                           \
            (PFN_##name)vk->fn.vkGetDeviceProcAddr(d->device, #name)))         \
    status = dlc_message_set(message, DLC_ERROR_UNAVAILABLE,                   \
                             "Vulkan device '%s' lacks " #name,                \
                             d->properties.deviceName);
  DLC_VK_DEVICE_FUNCTIONS(DLC_VK_RESOLVE)
#undef DLC_VK_RESOLVE
  if (status != DLC_OK) {
    /* vkDestroyDevice itself may be what is missing. */
    PFN_vkDestroyDevice destroy =
        (PFN_vkDestroyDevice)vk->fn.vkGetDeviceProcAddr(d->device,
                                                        "vkDestroyDevice");
    if (destroy)
      destroy(d->device, NULL);
    d->device = VK_NULL_HANDLE;
    return status;
  }
  d->fn.vkGetDeviceQueue(d->device, d->queue_family, 0, &d->queue);
  return DLC_OK;
}

dlc_status_t dlc_vk_device_open(dlc_vk_driver_t *vk, dlc_vk_device_t *device,
                                dlc_message_t *message) {
  dlc_status_t status = DLC_OK;
  dlc_mutex_lock(&vk->lock);
  if (!device->device)
    status = dlc_vk_create_device(vk, device, message);
  dlc_mutex_unlock(&vk->lock);
  return status;
}
