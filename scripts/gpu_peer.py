#!/usr/bin/env python3
"""PyTorch on the same GPU as the peer of dlc's CUDA numbers.

Builds the zoo's architectures from torchvision and transformers (random
weights: timing does not depend on them) and times batch-1 fp32 inference
the way `dlc-run --bench` times an artifact: after warm-up, each run is one
replay of a captured CUDA graph, timed with CUDA events; prints p50 and p90
in milliseconds as JSON lines. TF32 is off (dlc computes in fp32); cuDNN
picks its algorithms (benchmark mode) before capture.

Needs a CUDA GPU, torch, torchvision and transformers: it runs on the GPU
machine, not in CI.

  python -m scripts.gpu_peer [--runs 200] [--models resnet18,...]
"""

import argparse
import json
import sys

import torch


def models():
    import torchvision.models as tv
    from torchvision.models.vision_transformer import VisionTransformer

    def bert():
        from transformers import BertConfig, BertModel
        cfg = BertConfig(vocab_size=30522, hidden_size=128,
                         num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=512, max_position_embeddings=512,
                         attn_implementation="eager")
        m = BertModel(cfg)
        ids = torch.randint(0, 30522, (1, 128))
        mask = torch.ones(1, 128, dtype=torch.int64)
        types = torch.zeros(1, 128, dtype=torch.int64)
        return m, (ids, mask, types)

    image = (torch.randn(1, 3, 224, 224),)
    return {
        "mobilenetv2": lambda: (tv.mobilenet_v2(), image),
        "resnet18": lambda: (tv.resnet18(), image),
        "efficientnet_b0": lambda: (tv.efficientnet_b0(), image),
        "squeezenet1_1": lambda: (tv.squeezenet1_1(), image),
        "shufflenetv2": lambda: (tv.shufflenet_v2_x1_0(), image),
        "vit_tiny": lambda: (VisionTransformer(
            image_size=224, patch_size=16, num_layers=4, num_heads=3,
            hidden_dim=192, mlp_dim=768), image),
        "bert_tiny": bert,
    }


def time_graph(model, inputs, runs):
    model = model.cuda().eval()
    inputs = tuple(x.cuda() for x in inputs)
    with torch.inference_mode():
        for _ in range(5):
            model(*inputs)
        torch.cuda.synchronize()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                model(*inputs)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            model(*inputs)
        for _ in range(10):
            graph.replay()
        times = []
        for _ in range(runs):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2], times[int(len(times) * 0.9)]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--models", default="")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    table = models()
    names = args.models.split(",") if args.models else list(table)
    print(json.dumps({"torch": torch.__version__,
                      "cudnn": torch.backends.cudnn.version(),
                      "device": torch.cuda.get_device_name()}), flush=True)
    for name in names:
        try:
            model, inputs = table[name]()
            p50, p90 = time_graph(model, inputs, args.runs)
            print(json.dumps({"model": name, "p50_ms": round(p50, 4),
                              "p90_ms": round(p90, 4)}), flush=True)
        except Exception as e:  # report and go on with the next model
            print(json.dumps({"model": name, "error": repr(e)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
