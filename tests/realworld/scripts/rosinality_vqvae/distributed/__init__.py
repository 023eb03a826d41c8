# Source: https://github.com/rosinality/vq-vae-2-pytorch distributed/__init__.py (commit ef5f67c46f93624163776caec9e0d95063910eca)
# Licence: MIT. Copyright (c) 2019 Kim Seonghyeon (the LICENSE file's line).
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes: none.
from .distributed import (
    get_rank,
    get_local_rank,
    is_primary,
    synchronize,
    get_world_size,
    all_reduce,
    all_gather,
    reduce_dict,
    data_sampler,
    LOCAL_PROCESS_GROUP,
)
from .launch import launch
