"""Exercise checkers (temporary init while building)."""
from .softmax_checks import SOFTMAX, check_softmax
from .mask_checks import check_causal_mask, check_padding_mask
from .attention_checks import check_scaled_dot_product_attention
