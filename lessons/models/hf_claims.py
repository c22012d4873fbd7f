"""Claims the two library-model lessons check on every build, kept out of the model code."""

from __future__ import annotations

import torch
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from hf_models import tiny_llama


def check_causal(model) -> dict:
    """Changing the last token leaves the logits of every earlier position unchanged."""
    ids = torch.arange(6).unsqueeze(0)
    changed = ids.clone()
    changed[0, -1] = 7
    with torch.no_grad():
        a = model(input_ids=ids, use_cache=False).logits
        b = model(input_ids=changed, use_cache=False).logits
    diff = float((a[0, :-1] - b[0, :-1]).abs().max())
    return {"passed": diff < 1e-5, "value": diff, "tolerance": 1e-5}


def check_gqa_heads(model) -> dict:
    """Keys and values have half as many heads as queries: each is shared by two query heads."""
    attention = model.model.layers[0].self_attn
    head_dim = attention.head_dim
    queries, keys = attention.q_proj.out_features // head_dim, attention.k_proj.out_features // head_dim
    return {"passed": (queries, keys) == (4, 2), "value": queries / keys,
            "description": f"{queries} query heads share {keys} key/value heads"}


def check_rotary_keeps_norms(model) -> dict:
    """Rotary embedding rotates pairs of features: every query and key keeps its length."""
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(1, 4, 6, 8, generator=generator)
    k = torch.randn(1, 2, 6, 8, generator=generator)
    with torch.no_grad():
        cos, sin = model.model.rotary_emb(q, torch.arange(6).unsqueeze(0))
        q_rot, k_rot = apply_rotary_pos_emb(q, k, cos, sin)
    diff = max(float((q_rot.norm(dim=-1) - q.norm(dim=-1)).abs().max()),
               float((k_rot.norm(dim=-1) - k.norm(dim=-1)).abs().max()))
    return {"passed": diff < 1e-5, "value": diff, "tolerance": 1e-5}


def check_eager_matches_sdpa(model) -> dict:
    """The eager attention drawn here computes what the fused SDPA kernel computes."""
    fused = tiny_llama(attention="sdpa").eval()
    ids = torch.arange(6).unsqueeze(0)
    with torch.no_grad():
        diff = float((model(input_ids=ids, use_cache=False).logits
                      - fused(input_ids=ids, use_cache=False).logits).abs().max())
    return {"passed": diff < 1e-5, "value": diff, "tolerance": 1e-5}


def check_patch_tokens(model) -> dict:
    """A 16×16 image in 4×4 patches gives 16 patch tokens, plus the class token."""
    with torch.no_grad():
        tokens = model(pixel_values=torch.zeros(1, 3, 16, 16)).last_hidden_state.shape[1]
    return {"passed": tokens == 17, "value": tokens}


def check_patches_do_not_overlap(model) -> bool:
    """The patch projection is a convolution whose stride equals its kernel: patches tile the image."""
    conv = model.embeddings.patch_embeddings.projection
    return conv.kernel_size == conv.stride == (4, 4)


def check_patch_is_a_linear_map(model) -> dict:
    """The convolution is one linear map per patch: it equals flattening each patch and multiplying."""
    conv = model.embeddings.patch_embeddings.projection
    image = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        by_conv = conv(image).flatten(2).transpose(1, 2)  # 1 × 16 patches × 32
        patches = image.unfold(2, 4, 4).unfold(3, 4, 4).permute(0, 2, 3, 1, 4, 5).reshape(1, 16, 48)
        by_matmul = patches @ conv.weight.reshape(32, 48).T + conv.bias
    diff = float((by_conv - by_matmul).abs().max())
    return {"passed": diff < 1e-5, "value": diff, "tolerance": 1e-5}
