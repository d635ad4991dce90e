//===- ShapeInferenceGuard.h - ranks checked before ONNX's inference -----===//

#ifndef DLC_LIB_FRONTEND_ONNX_SHAPEINFERENCEGUARD_H
#define DLC_LIB_FRONTEND_ONNX_SHAPEINFERENCEGUARD_H

namespace onnx {
class ISchemaRegistry;
} // namespace onnx

namespace dlc {

/// The ONNX library's operator schemas, with the shape inference of the
/// operators whose functions trust their inputs' ranks guarded by a check
/// (ShapeInferenceGuard.cpp). Pass it to onnx::shape_inference::InferShapes.
const onnx::ISchemaRegistry *guardedSchemaRegistry();

} // namespace dlc

#endif // DLC_LIB_FRONTEND_ONNX_SHAPEINFERENCEGUARD_H
