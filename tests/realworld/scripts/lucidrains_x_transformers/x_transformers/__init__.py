from x_transformers.x_transformers import (
    XTransformer,
    Encoder,
    Decoder,
    PrefixDecoder,
    CrossAttender,
    Attention,
    FeedForward,
    RMSNorm,
    AdaptiveRMSNorm,
    TransformerWrapper,
    ViTransformerWrapper
)

from x_transformers.autoregressive_wrapper import AutoregressiveWrapper
from x_transformers.nonautoregressive_wrapper import NonAutoregressiveWrapper

from x_transformers.continuous import (
    ContinuousTransformerWrapper,
    ContinuousAutoregressiveWrapper
)

from x_transformers.multi_input import MultiInputTransformerWrapper

from x_transformers.xval import (
    XValTransformerWrapper,
    XValAutoregressiveWrapper
)

from x_transformers.xl_autoregressive_wrapper import XLAutoregressiveWrapper

from x_transformers.dpo import (
    DPO
)
