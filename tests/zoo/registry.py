"""The zoo's models: what each is, how it is built (random weights, seeded),
its inputs and their seeded values, the points (batch, sequence length) it
runs at, and the export by either PyTorch exporter. zoo.py stamps each export
with the SHA-256 of this file and the models_*.py files: change any and every model is
exported again, and its pinned hash must match or be re-pinned.
"""
import hashlib
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TORCHSCRIPT_OPSET = 17
# The dynamo exporter's opset: its own default unless HONE_ZOO_DYNAMO_OPSET names
# one (PyTorch's default is what a user gets, and what hone must read).
DYNAMO_OPSET = int(os.environ["HONE_ZOO_DYNAMO_OPSET"]) if os.environ.get("HONE_ZOO_DYNAMO_OPSET") else None


def tv(builder, **kw):
    """A torchvision builder with random weights (weights=None)."""
    def build():
        import torchvision
        fn = (getattr(torchvision.models, builder, None) or getattr(torchvision.models.video, builder, None)
              or getattr(torchvision.models.segmentation, builder))
        return fn(weights=None, **kw)
    return build


def seg(builder):
    """A torchvision segmentation builder: no weights, and no pretrained
    backbone either (its default would download ImageNet weights)."""
    return tv(builder, weights_backbone=None)


def custom(cls, module="models", **kw):
    """A module of this folder's models.py (or models_vision.py), built with kw."""
    def build():
        sys.path.insert(0, str(HERE))
        import importlib
        return getattr(importlib.import_module(module), cls)(**kw)
    return build


def vision(cls, **kw):
    return custom(cls, module="models_vision", **kw)


def apps(cls, **kw):
    return custom(cls, module="models_apps", **kw)


def llm(cls, **kw):
    return custom(cls, module="models_llm", **kw)


def more(cls, **kw):
    return custom(cls, module="models_more", **kw)


def nxt(cls, **kw):
    return custom(cls, module="models_next", **kw)


def hf(cls, **kw):
    return custom(cls, module="models_hf", **kw)


def v2(cls, **kw):
    return custom(cls, module="models_vision2", **kw)


def vit_tiny():
    import torchvision
    # DeiT-tiny's width (192, 3 heads) at 4 layers: the ViT family at CI size.
    return torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=4, num_heads=3,
                                                hidden_dim=192, mlp_dim=768, num_classes=1000)


def image_model(name, build, family, size=224, outputs=("logits",), heavy=False, note="", shape=None):
    """shape: the input's shape when it is not [batch, 3, size, size] (a video clip)."""
    return dict(name=name, family=family, build=build, heavy=heavy, note=note,
                inputs=[dict(name="pixels", dtype="float32", shape=shape or ["batch", 3, size, size], gen="normal")],
                outputs=list(outputs), seqs=[None])


def text_model(name, build, family, inputs, outputs, seqs, note="", derived=None):
    """derived: {dim: f(seq)} for dims other than batch and seq (a decoder's
    length), symbolic in the export and set from seq at each point."""
    return dict(name=name, family=family, build=build, heavy=False, note=note,
                inputs=inputs, outputs=list(outputs), seqs=list(seqs), derived=derived or {})


IDS = dict(name="input_ids", dtype="int64", shape=["batch", "seq"], gen="ids", vocab=1000)
MASK = dict(name="attention_mask", dtype="int64", shape=["batch", "seq"], gen="mask")
TYPES = dict(name="token_type_ids", dtype="int64", shape=["batch", "seq"], gen="types")

MODELS = [
    # torchvision image classification
    image_model("resnet18", tv("resnet18"), "torchvision classification"),
    image_model("resnet50", tv("resnet50"), "torchvision classification"),
    image_model("resnext50_32x4d", tv("resnext50_32x4d"), "torchvision classification"),
    image_model("alexnet", tv("alexnet"), "torchvision classification"),
    image_model("vgg11_bn", tv("vgg11_bn"), "torchvision classification", heavy=True),
    image_model("mobilenet_v2", tv("mobilenet_v2"), "torchvision classification"),
    image_model("mobilenet_v3_small", tv("mobilenet_v3_small"), "torchvision classification"),
    image_model("mobilenet_v3_large", tv("mobilenet_v3_large"), "torchvision classification"),
    image_model("efficientnet_b0", tv("efficientnet_b0"), "torchvision classification"),
    image_model("efficientnet_v2_s", tv("efficientnet_v2_s"), "torchvision classification", size=224),
    image_model("regnet_y_400mf", tv("regnet_y_400mf"), "torchvision classification"),
    image_model("regnet_x_400mf", tv("regnet_x_400mf"), "torchvision classification"),
    image_model("densenet121", tv("densenet121"), "torchvision classification"),
    image_model("squeezenet1_1", tv("squeezenet1_1"), "torchvision classification"),
    image_model("shufflenet_v2_x1_0", tv("shufflenet_v2_x1_0"), "torchvision classification"),
    image_model("mnasnet1_0", tv("mnasnet1_0"), "torchvision classification"),
    image_model("googlenet", tv("googlenet", aux_logits=False, init_weights=True), "torchvision classification"),
    image_model("inception_v3", tv("inception_v3", aux_logits=False, init_weights=True),
                "torchvision classification", size=299, heavy=True),
    image_model("convnext_tiny", tv("convnext_tiny"), "torchvision classification"),
    # vision transformers
    image_model("vit_tiny", vit_tiny, "vision transformer",
                note="torchvision's VisionTransformer at DeiT-tiny width, 4 layers"),
    image_model("vit_b_16", tv("vit_b_16"), "vision transformer", heavy=True),
    image_model("swin_t", tv("swin_t"), "vision transformer"),
    image_model("maxvit_t", tv("maxvit_t"), "vision transformer", heavy=True),
    # torchvision segmentation (outputs 'out' only: aux_loss off)
    image_model("deeplabv3_mobilenet_v3_large", seg("deeplabv3_mobilenet_v3_large"), "torchvision segmentation",
                outputs=("out",)),
    image_model("lraspp_mobilenet_v3_large", seg("lraspp_mobilenet_v3_large"), "torchvision segmentation",
                outputs=("out",)),
    image_model("fcn_resnet50", seg("fcn_resnet50"), "torchvision segmentation", size=160, outputs=("out",),
                heavy=True, note="160x160: its dilated ResNet-50 keeps stride 8, 4x the work of resnet50"),
    image_model("deeplabv3_resnet50", seg("deeplabv3_resnet50"), "torchvision segmentation", size=160,
                outputs=("out",), heavy=True, note="160x160, as fcn_resnet50"),
    # transformers' encoders and decoders, written in models.py
    text_model("bert_encoder", custom("BertEncoder"), "transformer encoder", [IDS, MASK, TYPES],
               ("last_hidden_state", "pooler_output"), (16, 128)),
    text_model("t5_encoder", custom("T5Encoder"), "transformer encoder", [IDS, MASK], ("last_hidden_state",),
               (16, 128)),
    text_model("gpt2_decoder", custom("Gpt2Decoder"), "transformer decoder", [IDS], ("logits",), (16, 128)),
    text_model("llama_decoder", custom("LlamaDecoder"), "transformer decoder", [IDS], ("logits",), (16, 128)),
    text_model("whisper_encoder", custom("WhisperEncoder"), "audio transformer encoder",
               [dict(name="input_features", dtype="float32", shape=["batch", 80, "seq"], gen="normal")],
               ("last_hidden_state",), (200, 400), note="seq is mel frames (2 s and 4 s of audio)"),
    text_model("lstm_tagger", custom("LstmTagger"), "recurrent", [IDS], ("tags",), (16, 128)),
    text_model("gru_kws", custom("GruClassifier"), "recurrent",
               [dict(name="features", dtype="float32", shape=["batch", 40, "seq"], gen="normal")],
               ("logits",), (49, 98), note="seq is 10 ms frames (0.5 s and 1 s)"),
    # added 2026-12-05: families a user base brings beyond the first 34
    image_model("r2plus1d_18", tv("r2plus1d_18"), "torchvision video", shape=["batch", 3, 8, 112, 112],
                heavy=True, note="a clip of 8 frames at 112x112: Conv3d factored (2+1)D, BatchNorm3d, 3-D pooling"),
    image_model("ssdlite320_mobilenet_v3_large", vision("DetectorHeads", builder="ssdlite320_mobilenet_v3_large"),
                "torchvision detection", size=320, outputs=("bbox_regression", "cls_logits"),
                note="backbone and head only: raw per-anchor outputs, no transform, no box decoding or NMS"),
    image_model("fcos_resnet50_fpn", vision("DetectorHeads", builder="fcos_resnet50_fpn"),
                "torchvision detection", size=256, outputs=("bbox_ctrness", "bbox_regression", "cls_logits"),
                heavy=True, note="backbone (ResNet-50, FPN P3-P7) and GroupNorm head only, at 256x256"),
    image_model("unet", vision("UNet"), "segmentation (written here)", size=128, outputs=("out",),
                note="ConvTranspose2d and bilinear upsampling, skip concatenation"),
    image_model("mobilevit", vision("MobileVit"), "hybrid conv + transformer (written here)", size=256,
                note="patches unfolded and folded by reshape and transpose"),
    image_model("mlp_mixer", vision("MlpMixer"), "MLP-Mixer (written here)"),
    image_model("swin_v2_t", tv("swin_v2_t"), "vision transformer", size=256, heavy=True,
                note="cosine attention, log-spaced continuous position bias MLP, post-norm"),
    text_model("wav2vec2_encoder", custom("Wav2Vec2Encoder"), "audio transformer encoder",
               [dict(name="input_values", dtype="float32", shape=["batch", "seq"], gen="normal")],
               ("last_hidden_state",), (16000, 32000), note="seq is 16 kHz samples (1 s and 2 s)"),
    text_model("bart_seq2seq", custom("BartSeq2Seq"), "transformer encoder-decoder",
               [IDS, MASK, dict(name="decoder_input_ids", dtype="int64", shape=["batch", "tgt"], gen="ids",
                                vocab=1000)],
               ("logits",), (16, 128), derived={"tgt": lambda s: s // 2},
               note="decoder length tgt is seq / 2"),
    # added 2026-12-05 (session 20): application families, written in models_apps.py
    text_model("conformer_encoder", apps("ConformerEncoder"), "speech encoder (Conformer)",
               [dict(name="input_features", dtype="float32", shape=["batch", 80, "seq"], gen="normal")],
               ("last_hidden_state",), (100, 200), note="seq is 10 ms mel frames (1 s and 2 s); time subsampled by 4"),
    text_model("diffusion_unet", apps("DiffusionUNet"), "latent diffusion denoiser",
               [dict(name="latents", dtype="float32", shape=["batch", 4, 32, 32], gen="normal"),
                dict(name="timestep", dtype="float32", shape=["batch"], gen="steps"),
                dict(name="context", dtype="float32", shape=["batch", 8, 64], gen="normal")],
               ("noise",), (None,), note="GroupNorm, timestep embedding, self- and cross-attention"),
    image_model("yolo_detector", apps("YoloDetector"), "one-stage detector (YOLOv8-style)", size=256,
                outputs=("predictions",), note="C2f split blocks, SPPF, nearest upsampling; raw outputs, no NMS"),
    text_model("clip_text_encoder", apps("ClipTextEncoder"), "text encoder (CLIP)", [IDS],
               ("last_hidden_state", "text_embeds"), (16, 77),
               note="causal mask by triu in forward; pooled at each row's argmax id"),
    text_model("dlrm", apps("Dlrm"), "recommendation (DLRM)",
               [dict(name="dense", dtype="float32", shape=["batch", 13], gen="normal"),
                dict(name="sparse", dtype="int64", shape=["batch", 8], gen="ids", vocab=1000),
                dict(name="bag", dtype="int64", shape=["batch", 4], gen="ids", vocab=1000)],
               ("scores",), (None,), note="8 embedding tables, a summed EmbeddingBag, dot interactions, 4 tasks"),
    text_model("dgcnn", apps("Dgcnn"), "point-cloud classifier (DGCNN)",
               [dict(name="points", dtype="float32", shape=["batch", 3, 256], gen="points", k=8)],
               ("logits",), (None,), note="kNN by topk, gathered edge features, max over neighbours"),
    image_model("espcn", apps("Espcn"), "super-resolution (ESPCN)", outputs=("upscaled",),
                shape=["batch", 1, 64, 64], note="PixelShuffle (DepthToSpace) by 3"),
    image_model("dcgan_generator", apps("DcganGenerator"), "image generator (DCGAN)", outputs=("image",),
                shape=["batch", 100, 1, 1], note="ConvTranspose2d from a latent vector to 64x64"),
    # added 2026-12-06 (session 23): models_llm.py and models_more.py
    text_model("sentence_embedder", more("SentenceEmbedder"), "sentence embedding (sentence-transformers)",
               [IDS, MASK], ("sentence_embedding",), (16, 128),
               note="masked mean pooling, then F.normalize"),
    text_model("mistral_decoder", llm("MistralDecoder"), "transformer decoder (Mistral/Qwen2)", [IDS, MASK],
               ("logits",), (16, 128), note="sliding-window causal mask by tril and masked_fill, cumsum positions"),
    text_model("kv_cache_decoder", llm("KvCacheDecoder"), "transformer decoder step with a KV cache",
               [IDS] + [dict(name="past_%s_%d" % (kv, i), dtype="float32", shape=["batch", 2, "past", 16],
                             gen="normal") for i in range(2) for kv in ("key", "value")],
               ("logits", "present_key_0", "present_value_0", "present_key_1", "present_value_1"), (8, 1),
               derived={"past": lambda s: 40 - s}, note="seq new tokens after past = 40 - seq cached ones"),
    text_model("alibi_decoder", llm("AlibiDecoder"), "transformer decoder (BLOOM/MPT, ALiBi)", [IDS, MASK],
               ("logits",), (16, 128), note="ALiBi slopes by pow of arange, cumsum and distance-matrix biases"),
    text_model("moe_decoder", llm("MoeDecoder"), "mixture-of-experts decoder (Mixtral)", [IDS], ("logits",),
               (16, 64), note="router softmax, topk(2), one_hot, torch.where routing, index_add_"),
    text_model("deberta_encoder", more("DebertaEncoder"), "transformer encoder (DeBERTa-v2/v3)", [IDS, MASK],
               ("last_hidden_state",), (16, 128), note="disentangled attention: gather of clamped log buckets"),
    image_model("detr_detector", more("DetrDetector"), "set-prediction detector (DETR)", size=256,
                outputs=("logits", "boxes"), note="ResNet-18, sine positions, learned queries cross-attending"),
    image_model("style_transfer", more("StyleTransfer"), "fast style transfer", size=128, outputs=("image",),
                note="ReflectionPad2d, InstanceNorm2d, nearest Upsample"),
    text_model("quartznet", more("QuartzNet"), "speech recognition (QuartzNet, TCN)",
               [dict(name="input_features", dtype="float32", shape=["batch", 64, "seq"], gen="normal")],
               ("log_probs",), (100, 200), note="seq is 10 ms mel frames; depthwise-separable dilated Conv1d"),
    text_model("gcn", more("Gcn"), "graph convolutional network (GCN)",
               [dict(name="node_features", dtype="float32", shape=["batch", "seq", 16], gen="normal"),
                dict(name="edge_index", dtype="int64", shape=[2, "edges"], gen="edges", nodes="seq")],
               ("logits",), (64, 256), derived={"edges": lambda s: 4 * s},
               note="seq is nodes, 4 edges a node; degrees and messages by scatter_add_"),
    # added 2026-12-06 (session 26): models_next.py
    image_model("segformer", nxt("SegFormer"), "semantic segmentation (SegFormer)", size=256, outputs=("logits",),
                note="MiT-b0 widths: K/V by a strided-conv spatial reduction, Mix-FFN depthwise conv, MLP decoder"),
    image_model("convnext_v2", nxt("ConvNeXtV2"), "convnet (ConvNeXt-V2 atto)",
                note="GRN: L2 norm over the spatial dims divided by its mean over the channels"),
    text_model("dinov2_vit", nxt("Dinov2"), "vision transformer (DINOv2, registers)",
               [dict(name="pixels", dtype="float32", shape=["batch", 3, "seq", "seq"], gen="normal")],
               ("cls_token", "patch_mean"), (112, 224),
               note="seq is the image side; 37x37 positions resized bicubically in the graph to seq/14"),
    text_model("mamba_lm", nxt("MambaLm"), "state-space language model (Mamba-2)", [IDS], ("logits",), (16, 128),
               note="input-dependent dt/B/C, causal depthwise Conv1d, SSD scan as exp of cumsum differences"),
    text_model("gat", nxt("Gat"), "graph attention network (GAT)",
               [dict(name="node_features", dtype="float32", shape=["batch", "seq", 16], gen="normal"),
                dict(name="edge_index", dtype="int64", shape=[2, "edges"], gen="edges", nodes="seq")],
               ("logits",), (64, 256), derived={"edges": lambda s: 4 * s},
               note="seq is nodes; per-edge LeakyReLU scores, softmax over incoming edges by scatter_add_"),
    text_model("patchtst", nxt("PatchTst"), "time-series forecaster (PatchTST)",
               [dict(name="series", dtype="float32", shape=["batch", 336, 7], gen="normal")],
               ("forecast",), (None,), note="RevIN, unfold into patches, channel independence, BatchNorm encoder"),
    # added 2026-12-06 (session 27): torchvision models run whole, models_vision2.py
    text_model("raft_small", v2("RaftFlow", updates=2), "optical flow (torchvision RAFT-small)",
               [dict(name="image1", dtype="float32", shape=["batch", 3, 128, 128], gen="normal"),
                dict(name="image2", dtype="float32", shape=["batch", 3, 128, 128], gen="normal")],
               ("flow",), (None,), note="correlation pyramid read by grid_sample, ConvGRU, 2 flow updates"),
    dict(image_model("fasterrcnn_mobilenet_v3_large_320_fpn",
                     v2("Detections", builder="fasterrcnn_mobilenet_v3_large_320_fpn", box_score_thresh=0.0),
                     "torchvision detection, whole", outputs=("boxes", "scores", "labels"), shape=[1, 3, 320, 320],
                     note="one image; RPN TopK and NMS, MultiScaleRoIAlign, per-class batched NMS"),
         output_axes={o: {0: "detections"} for o in ("boxes", "scores", "labels")}),
    image_model("mvit_v2", v2("mvit_v2_small"), "torchvision video (MViT-V2)", shape=["batch", 3, 4, 64, 64],
                note="V2-S blocks cut to 6: pooling attention, decomposed relative positions, a 4x64x64 clip"),
    dict(image_model("ssdlite320_detections", v2("Detections", builder="ssdlite320_mobilenet_v3_large",
                                                       num_classes=21, calibrate_images=4),
                     "torchvision detection, whole", outputs=("boxes", "scores", "labels"), shape=[1, 3, 320, 320],
                     note="one image, 21 classes (VOC's); SSDLite whole: per-class score filter and TopK, batched NMS"),
         output_axes={o: {0: "detections"} for o in ("boxes", "scores", "labels")}),
    # added 2026-12-06 (session 27): Hugging Face architectures, models_hf.py
    text_model("falcon_decoder", hf("FalconDecoder"), "transformer decoder (Falcon)", [IDS], ("logits",), (16, 128),
               note="parallel attention and MLP from one LayerNorm, multi-query attention, rotary"),
    text_model("gemma2_decoder", hf("Gemma2Decoder"), "transformer decoder (Gemma-2)", [IDS], ("logits",),
               (16, 128), note="(1 + w) RMSNorm, sqrt(d) embedding scale, tanh soft-capping, GeGLU, local/global"),
    text_model("neox_decoder", hf("NeoxDecoder"), "transformer decoder (GPT-NeoX/Pythia)", [IDS], ("logits",),
               (16, 128), note="partial rotary (a quarter of each head), parallel residual, fused QKV slices"),
    text_model("t5_seq2seq", hf("T5Seq2Seq"), "transformer encoder-decoder (T5 v1.1)",
               [IDS, MASK, dict(name="decoder_input_ids", dtype="int64", shape=["batch", "tgt"], gen="ids",
                                vocab=1000)],
               ("logits",), (16, 128), derived={"tgt": lambda s: s // 2},
               note="unidirectional relative buckets and causal mask in the decoder, cross-attention, gated GELU"),
    text_model("xlnet_encoder", hf("XlnetEncoder"), "transformer encoder (XLNet)", [IDS, MASK],
               ("last_hidden_state",), (16, 128), note="relative attention by einsum, rel_shift_bnij, [seq, batch]"),
    text_model("rwkv_lm", hf("RwkvLm"), "recurrent language model (RWKV-4)", [IDS], ("logits",), (16, 128),
               note="token shift by a negative ZeroPad2d, WKV decay over a [t, i] grid, squared-ReLU channel mix"),
]
BY_NAME = {m["name"]: m for m in MODELS}


def points(model, batches):
    """[(tag, {dim: value})] for the batch sizes asked, every sequence length.
    Batch 1 runs in CI; larger ones when asked (HONE_ZOO_BATCHES=1,32), and on
    a model marked heavy only with HONE_ZOO_HEAVY_BATCHES=1."""
    out = []
    for b in batches:
        if model["heavy"] and b != 1 and os.environ.get("HONE_ZOO_HEAVY_BATCHES") != "1":
            continue
        for s in model["seqs"]:
            out.append(("b%d" % b + ("" if s is None else "_s%d" % s), dims_at(model, b, s)))
    return out


def dims_at(model, batch, seq):
    """{dim: value} at a batch and sequence length (None: the model has none),
    with the dims derived from seq (a decoder's length)."""
    dims = {"batch": batch}
    if seq is not None:
        dims["seq"] = seq
        dims.update({k: f(seq) for k, f in model.get("derived", {}).items()})
    return dims


def seed_of(text):
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def make_inputs(model, dims, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in model["inputs"]:
        shape = [dims[d] if isinstance(d, str) else d for d in spec["shape"]]
        if spec["gen"] == "normal":
            a = rng.standard_normal(shape).astype(np.float32)
        elif spec["gen"] == "ids":
            a = rng.integers(0, spec["vocab"], size=shape, dtype=np.int64)
        elif spec["gen"] == "types":  # segment A then segment B, split at a random point per row
            a = np.zeros(shape, np.int64)
            for r in range(shape[0]):
                a[r, rng.integers(1, shape[1]):] = 1
        elif spec["gen"] == "mask":  # each row padded after a random length of at least half
            a = np.zeros(shape, np.int64)
            for r in range(shape[0]):
                a[r, : rng.integers(max(1, shape[1] // 2), shape[1] + 1)] = 1
        elif spec["gen"] == "steps":  # diffusion timesteps, uniform in [0, 1000)
            a = rng.uniform(0.0, 1000.0, size=shape).astype(np.float32)
        elif spec["gen"] == "edges":  # a graph's edge_index [2, edges] over dims[spec["nodes"]] nodes
            a = rng.integers(0, dims[spec["nodes"]], size=shape, dtype=np.int64)
        elif spec["gen"] == "points":  # [batch, 3, n], no near-tie at the k-th neighbour
            a = separated_points(rng, shape, spec["k"])
        else:
            raise ValueError(spec["gen"])
        arrays.append(a)
    return arrays


def separated_points(rng, shape, k, margin=1e-3):
    """Normal points [batch, 3, n] whose k-th and (k+1)-th nearest neighbours
    (the point itself first) are at least `margin` apart in squared distance
    for every point: where they nearly tie, two correct backends' rounding
    could pick different neighbours, and the outputs would differ by a whole
    neighbour, not by rounding. Points in a near-tie are drawn again."""
    import numpy as np
    a = rng.standard_normal(shape).astype(np.float32)
    for _ in range(1000):
        bad = []
        for b in range(shape[0]):
            p = a[b].T.astype(np.float64)
            d2 = np.sort(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1), axis=1)
            bad += [(b, i) for i in np.nonzero(d2[:, k] - d2[:, k - 1] < margin)[0]]
        if not bad:
            return a
        for b, i in bad:
            a[b, :, i] = rng.standard_normal(shape[1]).astype(np.float32)
    raise RuntimeError("could not draw %s points without near-ties at neighbour %d" % (shape, k))


def build_model(model):
    """The module with its random, seeded weights, made to behave like a
    trained one where a fresh initialization would not: a weight matrix
    initialized to zero (ViT's head) is drawn from N(0, 0.02), so the output
    is not identically zero; and BatchNorm's running statistics, which start
    at mean 0 and variance 1 whatever a layer's activations are, are measured
    on random inputs (two batches of 4 in training mode, cumulative average),
    so activations keep a unit scale through the net instead of vanishing
    (MobileNet and EfficientNet outputs near 1e-12) or exploding (Inception
    near 1e11), where a relative error would say little. Deterministic: the
    seed is the model's name."""
    import torch
    torch.manual_seed(seed_of(model["name"]))
    m = model["build"]()
    with torch.no_grad():
        for p in m.parameters():
            if p.dim() >= 2 and not p.any():
                p.normal_(0.0, 0.02)
    norms = [x for x in m.modules() if isinstance(x, torch.nn.modules.batchnorm._BatchNorm)]
    if norms:
        for x in norms:
            x.reset_running_stats()
            x.momentum = None
        m.train()
        dims = dims_at(model, 4, model["seqs"][0])
        with torch.no_grad():
            for k in range(2):
                m(*[torch.from_numpy(a) for a in make_inputs(model, dims, seed_of(model["name"] + "/calibrate%d" % k))])
    m.eval()
    return m


def torch_version_tuple():
    import torch
    return tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])


def export(model, module, example, path, exporter):
    import torch
    names = [x["name"] for x in model["inputs"]]
    if exporter == "torchscript":
        kw = {}
        if torch_version_tuple() >= (2, 5):
            kw["dynamo"] = False  # torch >= 2.9 makes dynamo the default
        dynamic_axes = {x["name"]: {i: d for i, d in enumerate(x["shape"]) if isinstance(d, str)}
                        for x in model["inputs"]}
        for o in model["outputs"]:  # a detector's outputs: their own axes (the detections' count)
            dynamic_axes[o] = model.get("output_axes", {}).get(o, {0: "batch"})
        # Not under torch.no_grad(): there torch 1.13's nn.MultiheadAttention
        # takes its fused fast path (aten::_native_multi_head_attention), which
        # the TorchScript exporter cannot export (vit_b_16, whisper_encoder).
        torch.onnx.export(module, tuple(example), str(path), input_names=names,
                          output_names=model["outputs"], dynamic_axes=dynamic_axes,
                          opset_version=TORCHSCRIPT_OPSET, do_constant_folding=True, **kw)
    elif exporter == "dynamo":
        if torch_version_tuple() < (2, 5):
            raise RuntimeError("the dynamo exporter needs torch >= 2.5 (this is %s)" % torch.__version__)
        import inspect
        from torch.export import Dim
        longest = max([s for s in model["seqs"] if s is not None] or [0])
        dims = {"batch": Dim("batch", min=1, max=1024), "seq": Dim("seq", min=2, max=max(4096, 4 * longest)),
                "tgt": Dim("tgt", min=2, max=4096), "past": Dim("past", min=1, max=4096),
                "edges": Dim("edges", min=1, max=1 << 20)}
        # Positional, one entry per input: forward's own argument names differ from the inputs'.
        dynamic_shapes = tuple({i: dims[d] for i, d in enumerate(x["shape"]) if isinstance(d, str)}
                               for x in model["inputs"])
        kw = dict(input_names=names, output_names=model["outputs"], dynamic_shapes=dynamic_shapes,
                  dynamo=True, external_data=False)
        if DYNAMO_OPSET is not None:
            kw["opset_version"] = DYNAMO_OPSET
        accepted = inspect.signature(torch.onnx.export).parameters
        prog = torch.onnx.export(module, tuple(example), **{k: v for k, v in kw.items() if k in accepted})
        prog.save(str(path))
    else:
        raise ValueError("exporter is torchscript or dynamo, not '%s'" % exporter)


def save_npy(folder, prefix, arrays):
    import numpy as np
    folder.mkdir(parents=True, exist_ok=True)
    for i, a in enumerate(arrays):
        np.save(folder / ("%s_%d.npy" % (prefix, i)), np.ascontiguousarray(a))


def torch_outputs(module, arrays):
    import torch
    with torch.no_grad():
        out = module(*[torch.from_numpy(a) for a in arrays])
    if isinstance(out, dict):
        out = [out[k] for k in out]
    elif not isinstance(out, (tuple, list)):
        out = [out]
    return [o.detach().numpy() for o in out]


