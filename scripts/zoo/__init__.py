"""The model zoo: its generator, ONNX Runtime oracle and benchmark."""
