# Source: https://github.com/rasbt/LLMs-from-scratch pkg/llms_from_scratch/__init__.py (commit c21bfe4a23b9fa6ecf0b823127ccf4059a754109)
# Licence: Apache License 2.0. Copyright 2023-2026 Sebastian Raschka (the repository's LICENSE.txt,
#   copied into tests/realworld/scripts/llms_from_scratch/ as LICENSE.txt).
# Changes: none (the file as written)
# Copyright (c) Sebastian Raschka under Apache License 2.0 (see LICENSE.txt).
# Source for "Build a Large Language Model From Scratch"
#   - https://www.manning.com/books/build-a-large-language-model-from-scratch
# Code: https://github.com/rasbt/LLMs-from-scratch