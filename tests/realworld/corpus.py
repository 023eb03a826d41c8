"""The real-script corpus: which scripts, how to run a pair, and when two runs agree.

Each `Entry` is one script file under ``scripts/`` with its arguments. `run_pair` runs it
under torch (recording the random draws) and then under lazytorch installed as ``torch``
(replaying them), each in a fresh process (`harness`), and `compare_values` checks the loss
sequences step by step with the tolerance rule of README.md:

>>> compare_values([2.0, 1.0], [2.0 + 1e-5, 1.0], "float32")
>>> compare_values([2.0, 1.0], [2.01, 1.0], "float32")
'step 0: torch 2.0, lazytorch 2.01 (allowed difference 0.0002)'
"""

from __future__ import annotations

import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "scripts"


@dataclass(frozen=True)
class Entry:
    """One corpus script: `script` under scripts/, run with `args`."""

    name: str
    script: str
    source: str  # owner/repo path, for the report
    args: str = ""  # the script's command line (split on spaces)
    fast: bool = False  # in the CI slice (tests/realworld/test_realworld.py, not marked slow)
    dtype: str = "float32"  # the dtype its losses are computed in (sets the tolerance)
    # The exact start of the error lazytorch raises while a feature is missing; the test is
    # an xfail (strict) that flips when the feature lands.
    xfail: str | None = None
    # Training that amplifies rounding differences step over step (README.md, "Chaotic
    # scripts"): losses are compared up to this step; the later ones are reported only.
    chaotic_after: int | None = None
    # The script reads its values with float(t)/int(t)/bool(t) rather than item(): log
    # those too (harness.LOG_CONVERSIONS), in both runs.
    log_conversions: bool = False
    # The script logs no value in either run (no loss, item(), printed or saved tensor):
    # why. Its test then checks that it runs, and that torch's run logged nothing too.
    logs_nothing: str | None = None


EX = "pytorch/examples"
TU = "pytorch/tutorials beginner_source"
RE = "pytorch/tutorials recipes_source/recipes"
MK = "karpathy/makemore makemore.py"
NGVL = "karpathy/ng-video-lecture"
YJ = "yunjey/pytorch-tutorial tutorials"
MZ = "MorvanZhou/PyTorch-Tutorial tutorial-contents/"
GK = "graykode/nlp-tutorial "
MRL = "seungeunrho/minimalRL "
WLM = f"{EX} word_language_model/main.py + model.py + data.py"
MAKEMORE = "--max-steps 41 --batch-size 16 --n-layer 2 --n-embd 32 --n-embd2 32 --type"
WLM_ARGS = "--emsize 32 --nhid 32 --nlayers 1 --bptt 10 --batch_size 8 --epochs 1 --model"
CIFAR = "kuangliu/pytorch-cifar main.py + models/"
CIFAR_ARGS = "--epochs 1 --lr 0.01 --model"
CIFAR_MODELS = [
    ("lenet", "LeNet()"),
    ("vgg11", "VGG('VGG11')"),
    ("resnet18", "ResNet18()"),
    ("preact_resnet18", "PreActResNet18()"),
    ("densenet_cifar", "densenet_cifar()"),
    ("resnext29_2x64d", "ResNeXt29_2x64d()"),
    ("dpn26", "DPN26()"),
    ("shufflenetv2", "ShuffleNetV2(0.5)"),
    ("senet18", "SENet18()"),
    ("efficientnet_b0", "EfficientNetB0()"),
]
CIFAR_CHAOTIC = [
    ("googlenet", "GoogLeNet()"),
    ("resnet50", "ResNet50()"),
    ("preact_resnet50", "PreActResNet50()"),
    ("mobilenet", "MobileNet()"),
    ("mobilenetv2", "MobileNetV2()"),
    ("regnetx_200mf", "RegNetX_200MF()"),
    ("regnety_400mf", "RegNetY_400MF()"),
    ("simple_dla", "SimpleDLA()"),
    ("dla", "DLA()"),
    ("pnasnet_a", "PNASNetA()"),
    ("pnasnet_b", "PNASNetB()"),
]
MINGPT = (
    "--trainer.batch_size=8 --trainer.max_iters=10 --trainer.num_workers=0 --system.work_dir=out"
)
PG = "eriklindernoren/PyTorch-GAN implementations/"
GAN_ARGS = "--n_epochs 1 --batch_size 8 --img_size 16"
AP = "aladdinpersson/Machine-Learning-Collection ML/Pytorch/"
FLOWS_ARGS = "--batch-size 100 --test-batch-size 100 --epochs 2 --num-blocks 2 --dataset POWER"
GLOW_ARGS = "--batch 4 --iter 5 --n_flow 2 --n_block 2 --img_size 16"
LFS_KV = "--emb_dim 64 --n_heads 4 --n_layers 2 --max_new_tokens 12"
CORPUS: list[Entry] = [
    # pytorch/tutorials
    Entry(
        "polynomial_tensor",
        "polynomial_tensor.py",
        f"{TU}/examples_tensor/polynomial_tensor.py",
        fast=True,
    ),
    Entry(
        "polynomial_custom_function",
        "polynomial_custom_function.py",
        f"{TU}/examples_autograd/polynomial_custom_function.py",
        fast=True,
    ),
    Entry("polynomial_nn", "polynomial_nn.py", f"{TU}/examples_nn/polynomial_nn.py", fast=True),
    Entry("polynomial_optim", "polynomial_optim.py", f"{TU}/examples_nn/polynomial_optim.py"),
    Entry(
        "polynomial_autograd",
        "polynomial_autograd.py",
        f"{TU}/examples_autograd/polynomial_autograd.py",
    ),
    Entry(
        "two_layer_net_custom_function",
        "two_layer_net_custom_function.py",
        f"{TU}/examples_autograd/two_layer_net_custom_function.py",
    ),
    Entry("polynomial_module", "polynomial_module.py", f"{TU}/examples_nn/polynomial_module.py"),
    Entry("dynamic_net", "dynamic_net.py", f"{TU}/examples_nn/dynamic_net.py", fast=True),
    Entry("quickstart", "quickstart.py", f"{TU}/basics/quickstart_tutorial.py"),
    Entry(
        "sequence_models_tutorial",
        "sequence_models_tutorial.py",
        f"{TU}/nlp/sequence_models_tutorial.py",
    ),
    Entry(
        "word_embeddings_tutorial",
        "word_embeddings_tutorial.py",
        f"{TU}/nlp/word_embeddings_tutorial.py",
    ),
    Entry("cifar10_tutorial", "cifar10_tutorial.py", f"{TU}/blitz/cifar10_tutorial.py"),
    Entry("nn_tutorial", "nn_tutorial.py", f"{TU}/nn_tutorial.py"),
    Entry(
        "neural_networks_tutorial",
        "neural_networks_tutorial.py",
        f"{TU}/blitz/neural_networks_tutorial.py",
    ),
    Entry("autograd_tutorial", "autograd_tutorial.py", f"{TU}/blitz/autograd_tutorial.py"),
    Entry("tensor_tutorial", "tensor_tutorial.py", f"{TU}/blitz/tensor_tutorial.py"),
    Entry("tensorqs_tutorial", "tensorqs_tutorial.py", f"{TU}/basics/tensorqs_tutorial.py"),
    Entry("autogradqs_tutorial", "autogradqs_tutorial.py", f"{TU}/basics/autogradqs_tutorial.py"),
    Entry("buildmodel_tutorial", "buildmodel_tutorial.py", f"{TU}/basics/buildmodel_tutorial.py"),
    Entry(
        "optimization_tutorial",
        "optimization_tutorial.py",
        f"{TU}/basics/optimization_tutorial.py",
    ),
    Entry(
        "tensors_deeper_tutorial",
        "tensors_deeper_tutorial.py",
        f"{TU}/introyt/tensors_deeper_tutorial.py",
    ),
    # torch.autograd.profiler (timings differ, only printed) and torch.autograd.functional
    Entry(
        "autogradyt_tutorial",
        "autogradyt_tutorial.py",
        f"{TU}/introyt/autogradyt_tutorial.py",
    ),
    # the BiLSTM-CRF's loss has shape (1,): logged as a loss all the same (harness.py)
    Entry("bilstm_crf", "advanced_tutorial.py", f"{TU}/nlp/advanced_tutorial.py"),
    Entry(
        "deep_learning_tutorial",
        "deep_learning_tutorial.py",
        f"{TU}/nlp/deep_learning_tutorial.py",
    ),
    Entry(
        "nlp_pytorch_tutorial",
        "nlp_pytorch_tutorial.py",
        f"{TU}/nlp/pytorch_tutorial.py",
        fast=True,
    ),
    Entry("trainingyt", "trainingyt.py", f"{TU}/introyt/trainingyt.py"),
    Entry(
        "two_layer_net_autograd",
        "two_layer_net_autograd.py",
        f"{TU}/examples_autograd/two_layer_net_autograd.py",
    ),
    Entry(
        "two_layer_net_module",
        "two_layer_net_module.py",
        f"{TU}/examples_nn/two_layer_net_module.py",
    ),
    Entry(
        "knowledge_distillation",
        "knowledge_distillation_tutorial.py",
        f"{TU}/knowledge_distillation_tutorial.py",
    ),
    # Module.register_forward_hook and the deprecated register_backward_hook (on a Conv2d)
    Entry("nnft_tutorial", "nnft_tutorial.py", f"{TU}/former_torchies/nnft_tutorial.py", fast=True),
    Entry(
        "char_rnn_classification",
        "char_rnn_classification_tutorial.py",
        "pytorch/tutorials intermediate_source/char_rnn_classification_tutorial.py",
    ),
    Entry(
        "char_rnn_generation",
        "char_rnn_generation_tutorial.py",
        "pytorch/tutorials intermediate_source/char_rnn_generation_tutorial.py",
    ),
    Entry(
        "seq2seq_translation",
        "seq2seq_translation_tutorial.py",
        "pytorch/tutorials intermediate_source/seq2seq_translation_tutorial.py",
    ),
    # torch.func: functional_call, vmap(grad(...)) against a loop of autograd.grad; and
    # torch.utils.benchmark.Timer (timings are only printed)
    Entry(
        "per_sample_grads",
        "per_sample_grads.py",
        "pytorch/tutorials intermediate_source/per_sample_grads.py",
    ),
    # nn.utils.parametrize (caching, right_inverse, removal), linalg.solve, matrix_exp,
    # eigvalsh, det, nn.init.orthogonal_ (no losses: printed values only)
    Entry(
        "parametrizations",
        "parametrizations.py",
        "pytorch/tutorials intermediate_source/parametrizations.py",
        log_conversions=True,
    ),
    # nn.utils.prune: random/l1 unstructured, ln_structured, containers, remove, global
    # pruning (the sparsities are compared through float(tensor)), a custom method
    Entry(
        "pruning_tutorial",
        "pruning_tutorial.py",
        "pytorch/tutorials intermediate_source/pruning_tutorial.py",
        log_conversions=True,
    ),
    Entry(
        "defining_a_neural_network",
        "defining_a_neural_network.py",
        f"{RE}/defining_a_neural_network.py",
    ),
    Entry("zeroing_out_gradients", "zeroing_out_gradients.py", f"{RE}/zeroing_out_gradients.py"),
    Entry(
        "what_is_state_dict",
        "what_is_state_dict.py",
        f"{RE}/what_is_state_dict.py",
        logs_nothing="prints a model, parameter sizes and the optimizer's settings",
    ),
    Entry(
        "general_checkpoint",
        "saving_and_loading_a_general_checkpoint.py",
        f"{RE}/saving_and_loading_a_general_checkpoint.py",
    ),
    Entry(
        "warmstarting_model",
        "warmstarting_model_using_parameters_from_a_different_model.py",
        f"{RE}/warmstarting_model_using_parameters_from_a_different_model.py",
    ),
    Entry(
        "multiple_models_one_file",
        "saving_multiple_models_in_one_file.py",
        f"{RE}/saving_multiple_models_in_one_file.py",
    ),
    # pytorch/examples
    Entry("regression", "regression.py", f"{EX} regression/main.py", fast=True),
    Entry("mnist", "mnist.py", f"{EX} mnist/main.py"),
    Entry("mnist_rnn", "mnist_rnn.py", f"{EX} mnist_rnn/main.py"),
    Entry(
        "mnist_forward_forward",
        "mnist_forward_forward.py",
        f"{EX} mnist_forward_forward/main.py",
        args="--epochs 20 --train_size 200 --test_size 100",
    ),
    Entry("vae", "vae.py", f"{EX} vae/main.py"),
    Entry(
        "dcgan",
        "dcgan.py",
        f"{EX} dcgan/main.py",
        args="--dataset fake --batchSize 4 --nz 16 --ngf 8 --ndf 8 --niter 1 --workers 0 "
        "--manualSeed 1",
    ),
    Entry(
        "super_resolution",
        "super_resolution/main.py",
        f"{EX} super_resolution/main.py + model.py",
        args="--upscale_factor 3 --batchSize 4 --testBatchSize 4 --nEpochs 2 --threads 0",
    ),
    # LBFGS (float64) amplifies rounding: the torch/lazytorch difference grows about 10x
    # every four closure evaluations, from 3e-14 at step 4 to 1e-10 at step 32, 1e-8 at
    # step 44 and 1e-6 at step 55 (README.md, "Chaotic scripts")
    Entry(
        "time_sequence_prediction",
        "time_sequence_prediction.py",
        f"{EX} time_sequence_prediction/train.py",
        dtype="float64",
        chaotic_after=40,
    ),
    Entry("wlm_lstm", "word_language_model/main.py", WLM, args=f"{WLM_ARGS} LSTM"),
    Entry("wlm_gru", "word_language_model/main.py", WLM, args=f"{WLM_ARGS} GRU"),
    # lr 20 (the script's default) makes this small Transformer spike (losses 13.5, 15.2,
    # 43.7 at steps 6, 10, 16): the torch/lazytorch difference doubles each step from 1e-7
    # at step 3 to 3e-5 at step 14 and 1e-3 at step 20 (README.md, "Chaotic scripts")
    Entry(
        "wlm_transformer",
        "word_language_model/main.py",
        WLM,
        args=f"{WLM_ARGS} Transformer --nhead 2",
        chaotic_after=15,
    ),
    # nn.Transformer with key padding masks; torchtext's Multi30k -> synthetic pairs
    Entry(
        "language_translation",
        "language_translation/main.py",
        f"{EX} language_translation/main.py + src/data.py + src/model.py",
        args="--epochs 2 --batch 8 --attn_heads 2 --enc_layers 2 --dec_layers 2 "
        "--embed_size 32 --dim_feedforward 64",
    ),
    # Tensor.unfold patches, nn.MultiheadAttention with its weights (need_weights=True)
    Entry(
        "vision_transformer",
        "vision_transformer.py",
        f"{EX} vision_transformer/main.py",
        args="--patch-size 8 --latent-size 32 --num-heads 2 --num-encoders 2 --img-size 32 "
        "--epochs 2",
    ),
    # in-place writes into tensors of the graph (forces[i] += ..., positions[0] = ...)
    Entry(
        "mass_spring",
        "mass_spring.py",
        f"{EX} differentiable_physics/mass_spring.py",
        args="--epochs 30 --steps 20 --log_interval 5",
    ),
    # pytorch/examples scripts from its history: merged then reverted (swin) or proposed in
    # pull requests that were not merged (fizzbuzz, rbm, beta_vae); headers give the commits
    Entry("fizzbuzz", "fizzbuzz.py", f"{EX} fizzbuzz/main.py", args="--epochs 2 --num-digits 10"),
    # torch.normal parameters, torch.bernoulli Gibbs sampling
    Entry("rbm", "rbm.py", f"{EX} rbm/main.py", args="--batch 50 --epochs 1 --nh 32 --k 5"),
    Entry(
        "swin_transformer",
        "swin_transformer.py",
        f"{EX} swin_transformer/swin_transformer.py",
        args="--batch-size 16 --test-batch-size 64 --epochs 2 --log-interval 2",
    ),
    Entry(
        "beta_vae",
        "beta_vae.py",
        f"{EX} beta-vae/main.py",
        args="--batch-size 32 --epochs 2 --log-interval 4",
    ),
    Entry("wlm_rnn_relu", "word_language_model/main.py", WLM, args=f"{WLM_ARGS} RNN_RELU"),
    # tanh RNN with tied weights at the script's lr 20: the torch/lazytorch difference grows
    # about 4x per step, 7e-6 at step 5, 1e-4 at step 8, 1.7e-3 at step 9, and the runs part
    # after step 11; with --lr 5 or --lr 1 the 28 steps agree to 1e-6 (README.md, "Chaotic
    # scripts")
    Entry(
        "wlm_rnn_tanh_tied",
        "word_language_model/main.py",
        WLM,
        args=f"{WLM_ARGS} RNN_TANH --tied",
        chaotic_after=8,
    ),
    # sparse COO tensors: Tensor.to_sparse, torch.sparse_coo_tensor and torch.spmm
    Entry("gcn", "gcn.py", f"{EX} gcn/main.py"),
    # sparse COO tensors: Tensor.to_sparse and torch.sparse_coo_tensor (dense + sparse)
    Entry(
        "gat",
        "gat.py",
        f"{EX} gat/main.py",
        args="--epochs 10 --hidden-dim 16 --num-heads 2",
    ),
    # gymnasium's CartPole-v1 written out in _cartpole.py (gymnasium is not installed)
    Entry(
        "reinforce",
        "reinforcement_learning/reinforce.py",
        f"{EX} reinforcement_learning/reinforce.py",
    ),
    Entry(
        "actor_critic",
        "reinforcement_learning/actor_critic.py",
        f"{EX} reinforcement_learning/actor_critic.py",
    ),
    # Hogwild training in processes started by torch.multiprocessing (shared-memory
    # parameters); the torch run logs only the test pass made in the main process
    Entry(
        "mnist_hogwild",
        "mnist_hogwild/main.py",
        f"{EX} mnist_hogwild/main.py + train.py",
        args="--num-processes 2 --test-batch-size 64",
        # Training happens in two spawned processes that race on the shared model, and the
        # harness records and replays draws only in the parent: the run is checked for
        # running and logging as many values as torch's, not for equal values
        # (tests/api/test_multiprocessing.py checks a child's training exactly).
        chaotic_after=0,
    ),
    # siamese network: torchvision's resnet18 (stand-in written out, conv1 replaced, fc cut off
    # through list(children())[:-1]) on pairs of synthetic MNIST images picked with Python's
    # random from classes grouped by np.where over np.array(targets, copy=None), numpy-int
    # tensor indexing, BCELoss on sigmoid outputs, Adadelta at lr 1 with StepLR,
    # torch.where(outputs > 0.5, 1, 0) in the test pass.
    # Chaotic (README.md): Adadelta's lr 1 makes the losses jump (0.70, 6.9, 2.6, 3.1); torch
    # with 1 and with 2 threads differs by 3e-6 at step 2, 2.6e-3 at step 3 and 14% at step 4
    Entry(
        "siamese_network",
        "siamese_network/main.py",
        f"{EX} siamese_network/main.py",
        args="--batch-size 8 --test-batch-size 20 --epochs 1 --log-interval 1",
        chaotic_after=3,
    ),
    # seungeunrho/minimalRL: one-file RL algorithms on CartPole-v1 / Pendulum-v1 (stand-ins)
    Entry("minimalrl_reinforce", "minimalrl/reinforce.py", f"{MRL}REINFORCE.py"),
    Entry("minimalrl_actor_critic", "minimalrl/actor_critic.py", f"{MRL}actor_critic.py"),
    Entry("minimalrl_dqn", "minimalrl/dqn.py", f"{MRL}dqn.py"),
    Entry("minimalrl_ppo", "minimalrl/ppo.py", f"{MRL}ppo.py"),
    Entry("minimalrl_ppo_lstm", "minimalrl/ppo_lstm.py", f"{MRL}ppo-lstm.py"),
    Entry("minimalrl_vtrace", "minimalrl/vtrace.py", f"{MRL}vtrace.py"),
    Entry("minimalrl_acer", "minimalrl/acer.py", f"{MRL}acer.py"),
    Entry("minimalrl_ddpg", "minimalrl/ddpg.py", f"{MRL}ddpg.py"),
    Entry("minimalrl_sac", "minimalrl/sac.py", f"{MRL}sac.py"),
    # MorvanZhou/PyTorch-Tutorial tutorial-contents/
    Entry("morvan_variable", "morvan_variable.py", f"{MZ}202_variable.py", fast=True),
    Entry("morvan_regression", "morvan_regression.py", f"{MZ}301_regression.py", fast=True),
    Entry("morvan_classification", "morvan_classification.py", f"{MZ}302_classification.py"),
    Entry("morvan_optimizer", "morvan_optimizer.py", f"{MZ}306_optimizer.py"),
    Entry("morvan_cnn", "morvan_cnn.py", f"{MZ}401_CNN.py"),
    Entry("morvan_rnn_classifier", "morvan_rnn_classifier.py", f"{MZ}402_RNN_classifier.py"),
    Entry("morvan_rnn_regressor", "morvan_rnn_regressor.py", f"{MZ}403_RNN_regressor.py"),
    Entry("morvan_autoencoder", "morvan_autoencoder.py", f"{MZ}404_autoencoder.py"),
    Entry("morvan_gan", "morvan_gan.py", f"{MZ}406_GAN.py"),
    # gym's old API (reset -> obs, 4-result step, unwrapped) over _cartpole.py: _gym_v0.py
    Entry(
        "morvan_dqn",
        "reinforcement_learning/morvan_dqn.py",
        f"{MZ}405_DQN_Reinforcement_learning.py",
    ),
    Entry("morvan_dynamic_graph", "morvan_dynamic_graph.py", f"{MZ}501_why_torch_dynamic_graph.py"),
    Entry("morvan_dropout", "morvan_dropout.py", f"{MZ}503_dropout.py"),
    # Eight tanh layers with batch norm (momentum 0.5) on nearly constant activations: the
    # BN net's losses (odd steps) differ by 1e-6 at step 1, 5e-5 at step 5, 4e-4 at step 7
    # and 1e-2 at step 11, and the same growth shows between two torch runs (1 thread
    # against 2: 9.4e-3 at step 11, 8e-4 in the test loss after epoch 1, items[3]); float64
    # lazytorch matches float64 torch to 3e-13 (README.md, "Chaotic scripts")
    Entry(
        "morvan_batch_normalization",
        "morvan_batch_normalization.py",
        f"{MZ}504_batch_normalization.py",
        chaotic_after=3,
    ),
    # karpathy
    Entry(
        "nanogpt",
        "nanogpt/train.py",
        "karpathy/nanoGPT train.py + model.py",
    ),
    Entry(
        "mingpt_chargpt",
        "mingpt/chargpt.py",
        "karpathy/minGPT projects/chargpt/chargpt.py + mingpt/",
        args=f"--model.model_type=gpt-nano --data.block_size=32 {MINGPT}",
    ),
    Entry(
        "mingpt_adder",
        "mingpt/adder.py",
        "karpathy/minGPT projects/adder/adder.py + mingpt/",
        args=f"--data.ndigit=1 {MINGPT}",
    ),
    # karpathy/ng-video-lecture (tiny Shakespeare, first 100 kB); the final samples draw
    # with torch.multinomial
    Entry("ngvl_bigram", "ng_video_lecture/bigram.py", f"{NGVL} bigram.py"),
    Entry("ngvl_gpt", "ng_video_lecture/gpt.py", f"{NGVL} gpt.py"),
    # rasbt/LLMs-from-scratch (Apache 2.0): tiktoken -> a character-level stand-in
    Entry(
        "llms_from_scratch_gpt_train",
        "llms_from_scratch/gpt_train.py",
        "rasbt/LLMs-from-scratch ch05/01_main-chapter-code/gpt_train.py + previous_chapters.py",
    ),
    # warmup + cosine learning rate set in param_groups each step, clip_grad_norm_
    Entry(
        "llms_from_scratch_hparam_search",
        "llms_from_scratch/hparam_search.py",
        "rasbt/LLMs-from-scratch ch05/05_bonus_hparam_tuning/hparam_search.py + pkg/",
    ),
    # one data loader per "book", GPT-2's 50,257-token output head (its --debug model)
    Entry(
        "llms_from_scratch_pretraining_simple",
        "llms_from_scratch/pretraining_simple.py",
        "rasbt/LLMs-from-scratch ch05/03_bonus_pretraining_on_gutenberg/pretraining_simple.py",
        args="--data_dir data/books --debug True --batch_size 16 --eval_freq 5 "
        "--print_sample_iter 25",
    ),
    # ch04's KV-cache generation scripts (a random bfloat16 GPT with GPT-2's 50,257-token head,
    # greedy decoding through a KV cache kept in registered buffers; the printed token ids
    # are compared): grouped-query attention (repeat_interleave over the KV groups),
    # multi-head latent attention (a down/up-projected latent cache), sliding-window attention
    # (a windowed cache, every 2nd layer), a mixture of experts (topk routing, softmax gates,
    # torch.unique over the chosen experts, SwiGLU experts, index_add_ of their outputs)
    # ch05's training-speed script: a bfloat16 GPT (parameters and activations) under
    # torch.compile, F.scaled_dot_product_attention(is_causal=True, dropout_p=0.1 in
    # training), GELU(approximate="tanh"), fused AdamW with weight decay, a shuffled
    # DataLoader with 4 workers, evaluation every 10 steps, greedy sampling. Its losses are
    # bfloat16 values (steps of 1/32 near 4.7); torch's CPU flash attention rounds its
    # bfloat16 output from a vectorized exp that is not libm's, so 5% of the attention
    # outputs sit one bfloat16 ulp from the same formula in torch's own float32 ops (and
    # from lazytorch's), and every later activation and gradient carries that: step 2's
    # loss and the first evaluation (after one update) differ by one ulp (README.md,
    # "Chaotic scripts"). Compared at step 0.
    Entry(
        "llms_from_scratch_opt_single_gpu",
        "llms_from_scratch/opt_single_gpu.py",
        "rasbt/LLMs-from-scratch ch05/10_llm-training-speed/01_opt_single_gpu.py",
        chaotic_after=0,
    ),
    Entry(
        "llms_from_scratch_kv_gqa",
        "llms_from_scratch/gpt_with_kv_gqa.py",
        "rasbt/LLMs-from-scratch ch04/04_gqa/gpt_with_kv_gqa.py",
        args=f"{LFS_KV} --n_kv_groups 2",
    ),
    Entry(
        "llms_from_scratch_kv_mla",
        "llms_from_scratch/gpt_with_kv_mla.py",
        "rasbt/LLMs-from-scratch ch04/05_mla/gpt_with_kv_mla.py",
        args=f"{LFS_KV} --latent_dim 16",
    ),
    Entry(
        "llms_from_scratch_kv_swa",
        "llms_from_scratch/gpt_with_kv_swa.py",
        "rasbt/LLMs-from-scratch ch04/06_swa/gpt_with_kv_swa.py",
        args=f"{LFS_KV} --sliding_window_size 4 --sliding_window_stride 2",
    ),
    Entry(
        "llms_from_scratch_kv_moe",
        "llms_from_scratch/gpt_with_kv_moe.py",
        "rasbt/LLMs-from-scratch ch04/07_moe/gpt_with_kv_moe.py",
        args=f"{LFS_KV} --hidden_dim 128 --num_experts 4 --num_experts_per_tok 2",
    ),
    # karpathy/build-nanogpt: bfloat16 autocast on CPU, gradient accumulation, clipping, a
    # HellaSwag pass and top-k sampling with a torch.Generator. The HellaSwag picks
    # (argmin of each example's mean bfloat16 completion loss, items 2-7 and 25-30) compare
    # averages that bfloat16 quantizes to steps of 1/32: of an untrained model they tie or
    # differ by one step, so after eight updates (weights 1e-6 apart, losses 1e-5 apart) 3
    # of the last 6 picks flip between torch and lazytorch. Compared up to item 25: every
    # loss and the first evaluation's picks (identical weights).
    Entry(
        "build_nanogpt",
        "build_nanogpt/train_gpt2.py",
        "karpathy/build-nanogpt train_gpt2.py + hellaswag.py",
        chaotic_after=25,
    ),
    # karpathy/llm.c: its own .bin token loader, gradient accumulation, clipping, AdamW
    # param groups, top-k sampling before the first step (every token a cut: the untrained
    # weights are drawn once, runtime.held_with), and the C bridge's files: parameters in
    # float32 and as bfloat16 bits (`t.to(torch.bfloat16).view(torch.int16)`)
    Entry(
        "llmc_train_gpt2",
        "llmc/train_gpt2.py",
        "karpathy/llm.c train_gpt2.py",
        args="--input_bin llmc_tokens.bin --input_val_bin llmc_tokens.bin --model d12 "
        "--batch_size 4 --sequence_length 32 --total_batch_size 256 --num_iterations 6 "
        "--val_loss_every 3 --val_max_steps 2 --sample_every 3",
    ),
    # IterableDataset over np.memmap shards, RoPE, GQA, GradScaler (disabled), clipping, a
    # checkpoint with the optimizer's state and the model exported with struct
    Entry(
        "llama2c",
        "llama2c/train.py",
        "karpathy/llama2.c train.py + model.py + tinystories.py + export.py",
        args="--device=cpu --compile=False --dtype=float32 --batch_size=4 --max_seq_len=32 "
        "--vocab_source=custom --vocab_size=256 --dim=32 --n_layers=2 --n_heads=4 "
        "--n_kv_heads=2 --multiple_of=16 --dropout=0.1 --gradient_accumulation_steps=2 "
        "--max_iters=10 --eval_interval=5 --eval_iters=3 --warmup_iters=2",
    ),
    Entry("makemore_bigram", "makemore.py", MK, args=f"{MAKEMORE} bigram"),
    Entry("makemore_mlp", "makemore.py", MK, args=f"{MAKEMORE} mlp"),
    Entry("makemore_rnn", "makemore.py", MK, args=f"{MAKEMORE} rnn"),
    Entry("makemore_gru", "makemore.py", MK, args=f"{MAKEMORE} gru"),
    Entry("makemore_bow", "makemore.py", MK, args=f"{MAKEMORE} bow"),
    Entry("makemore_transformer", "makemore.py", MK, args=f"{MAKEMORE} transformer"),
    # yunjey/pytorch-tutorial
    Entry(
        "yunjey_pytorch_basics",
        "yunjey_pytorch_basics.py",
        f"{YJ}/01-basics/pytorch_basics/main.py",
    ),
    Entry(
        "yunjey_linear_regression",
        "yunjey_linear_regression.py",
        f"{YJ}/01-basics/linear_regression/main.py",
    ),
    Entry(
        "yunjey_logistic_regression",
        "yunjey_logistic_regression.py",
        f"{YJ}/01-basics/logistic_regression/main.py",
    ),
    Entry(
        "yunjey_feedforward_neural_network",
        "yunjey_feedforward_neural_network.py",
        f"{YJ}/01-basics/feedforward_neural_network/main.py",
    ),
    Entry(
        "yunjey_convolutional_neural_network",
        "yunjey_convolutional_neural_network.py",
        f"{YJ}/02-intermediate/convolutional_neural_network/main.py",
    ),
    # Adam on this BatchNorm ResNet amplifies rounding from the first steps: torch float32
    # itself drifts from the same training in float64 by 2e-5 at step 1, 2e-4 at step 4 and
    # 1e-3 at step 5 (lazytorch float32 vs float64: 1e-5, 1.4e-4, 1.7e-4; same initial
    # weights and data); torch/lazytorch differ by 1.2e-5 at step 1 and 2.1e-4 at step 4
    # (README.md, "Chaotic scripts")
    Entry(
        "yunjey_deep_residual_network",
        "yunjey_deep_residual_network.py",
        f"{YJ}/02-intermediate/deep_residual_network/main.py",
        chaotic_after=4,
    ),
    Entry(
        "yunjey_recurrent_neural_network",
        "yunjey_recurrent_neural_network.py",
        f"{YJ}/02-intermediate/recurrent_neural_network/main.py",
    ),
    Entry(
        "yunjey_bidirectional_recurrent_neural_network",
        "yunjey_bidirectional_recurrent_neural_network.py",
        f"{YJ}/02-intermediate/bidirectional_recurrent_neural_network/main.py",
    ),
    Entry(
        "yunjey_language_model",
        "yunjey_language_model/main.py",
        f"{YJ}/02-intermediate/language_model/main.py + data_utils.py",
    ),
    Entry(
        "yunjey_generative_adversarial_network",
        "yunjey_generative_adversarial_network.py",
        f"{YJ}/03-advanced/generative_adversarial_network/main.py",
    ),
    Entry(
        "yunjey_variational_autoencoder",
        "yunjey_variational_autoencoder.py",
        f"{YJ}/03-advanced/variational_autoencoder/main.py",
    ),
    # graykode/nlp-tutorial: one-file NLP models on a few inline sentences
    Entry("graykode_nnlm", "graykode_nnlm.py", f"{GK}1-1.NNLM/NNLM.py"),
    Entry(
        "graykode_word2vec_skipgram",
        "graykode_word2vec_skipgram.py",
        f"{GK}1-2.Word2Vec/Word2Vec-Skipgram(Softmax).py",
    ),
    Entry("graykode_textcnn", "graykode_textcnn.py", f"{GK}2-1.TextCNN/TextCNN.py"),
    Entry("graykode_textrnn", "graykode_textrnn.py", f"{GK}3-1.TextRNN/TextRNN.py"),
    Entry("graykode_textlstm", "graykode_textlstm.py", f"{GK}3-2.TextLSTM/TextLSTM.py"),
    Entry("graykode_bilstm", "graykode_bilstm.py", f"{GK}3-3.Bi-LSTM/Bi-LSTM.py"),
    Entry("graykode_seq2seq", "graykode_seq2seq.py", f"{GK}4-1.Seq2Seq/Seq2Seq.py"),
    Entry(
        "graykode_seq2seq_attention",
        "graykode_seq2seq_attention.py",
        f"{GK}4-2.Seq2Seq(Attention)/Seq2Seq(Attention).py",
    ),
    Entry(
        "graykode_bilstm_attention",
        "graykode_bilstm_attention.py",
        f"{GK}4-3.Bi-LSTM(Attention)/Bi-LSTM(Attention).py",
    ),
    Entry("graykode_transformer", "graykode_transformer.py", f"{GK}5-1.Transformer/Transformer.py"),
    Entry(
        "graykode_transformer_greedy",
        "graykode_transformer_greedy.py",
        f"{GK}5-1.Transformer/Transformer(Greedy_decoder).py",
    ),
    Entry("graykode_bert", "graykode_bert.py", f"{GK}5-2.BERT/BERT.py"),
    # torch.utils.tensorboard.SummaryWriter: add_scalar of the loss tensor every step, flush, close
    Entry(
        "tensorboard_with_pytorch",
        "tensorboard_with_pytorch.py",
        f"{RE}/tensorboard_with_pytorch.py",
    ),
    # SummaryWriter add_image (a make_grid of the batch), add_scalars every 20 batches,
    # add_graph (warns: no jit trace), add_embedding with metadata and sprite
    Entry(
        "tensorboardyt_tutorial",
        "tensorboardyt_tutorial.py",
        f"{TU}/introyt/tensorboardyt_tutorial.py",
    ),
    # model building: printed modules and parameters, nn.Softmax() without dim (warns),
    # `import torch.functional as F`, MaxPool2d over a 3-d input, BatchNorm1d over (1, 4, 4),
    # a Dropout module applied twice
    Entry(
        "modelsyt_tutorial", "modelsyt_tutorial.py", f"{TU}/introyt/modelsyt_tutorial.py", fast=True
    ),
    # forward-mode AD: torch.autograd.forward_ad (dual_level, make_dual, unpack_dual), a custom
    # Function's jvp, gradcheck(check_forward_ad=True), functorch.jvp and
    # make_functional_with_buffers (lazytorch's forward mode is the transposed vjp)
    Entry(
        "forward_ad_usage",
        "forward_ad_usage.py",
        "pytorch/tutorials intermediate_source/forward_ad_usage.py",
        logs_nothing="asserts the tangents it unpacks and runs gradcheck(check_forward_ad=True) "
        "against finite differences; prints nothing",
    ),
    # kuangliu/pytorch-cifar (MIT): main.py trains one model of models/ (--model, a constructor
    # expression) for one epoch of 2 SGD steps (lr 0.01, momentum, weight decay) on 4 synthetic
    # CIFAR images (batch 2), then tests 2 in eval mode. ShuffleNetG2/G3 are left out: their
    # Bottleneck passes a float (out_planes/4) to nn.Conv2d, which torch 2.x refuses too.
    *[
        Entry(f"cifar_{name}", "pytorch_cifar/main.py", CIFAR, args=f"{CIFAR_ARGS} {model}")
        for name, model in CIFAR_MODELS
    ],
    # Batch-norm nets whose float32 step-0 gradients are rounding-dominated with a batch of 2
    # (BN over 8 to 32 values a channel; MobileNet's BN-bias gradients differ by 1% between
    # torch float32 and float64 at step 0): on 4 seeded images, torch float32 is 3e-4
    # (SimpleDLA) to 1.2e-1 (RegNetY) from the same two steps and test in float64 at step 1,
    # and lazytorch float32 as close to float64 as torch is. In float64 (same weights and
    # data) torch and lazytorch agree to 5e-12 or better for all 21 models
    # (test_cifar_float64.py checks two of these). Step 0 (forward and loss) is compared.
    *[
        Entry(
            f"cifar_{name}",
            "pytorch_cifar/main.py",
            CIFAR,
            args=f"{CIFAR_ARGS} {model}",
            chaotic_after=1,
        )
        for name, model in CIFAR_CHAOTIC
    ],
    # torch.func.stack_module_state + vmap(functional_call) over an ensemble whose
    # "stateless" base model is on the meta device; torch.utils.benchmark.Timer
    Entry(
        "ensembling",
        "ensembling.py",
        "pytorch/tutorials intermediate_source/ensembling.py",
        logs_nothing="asserts that the vmapped predictions equal the looped ones; prints "
        "parameter sizes and timings",
    ),
    # torch.func: vjp, jacrev/jacfwd (argnums tuples), hessian, vmap over jacrev and
    # hessian, jvp(grad(f)) and vjp(grad(f)) Hessian-vector products, benchmark.Timer
    Entry(
        "jacobians_hessians",
        "jacobians_hessians.py",
        "pytorch/tutorials intermediate_source/jacobians_hessians.py",
    ),
    # empirical NTK of a small CNN: vmap(jacrev(functional_call)) contracted with einsum,
    # and vmap(vmap(...)) over vjp + jvp; the two methods are asserted equal
    Entry(
        "neural_tangent_kernels",
        "neural_tangent_kernels.py",
        "pytorch/tutorials intermediate_source/neural_tangent_kernels.py",
        logs_nothing="asserts that the two NTK methods agree; prints shapes only",
    ),
    # the meta device: a conv on meta tensors, the torch.device('meta') context, forward
    # hooks printing shapes (printed meta tensors carry no values)
    Entry(
        "reasoning_about_shapes",
        "reasoning_about_shapes.py",
        f"{RE}/reasoning_about_shapes.py",
    ),
    # torch.save + torch.load(mmap=True), modules built under torch.device('meta'),
    # load_state_dict(assign=True) (the saved tensors are compared)
    Entry(
        "module_load_state_dict_tips",
        "module_load_state_dict_tips.py",
        f"{RE}/module_load_state_dict_tips.py",
        fast=True,
    ),
    # torch.device(...) as a context manager and torch.set_default_device
    Entry(
        "changing_default_device",
        "changing_default_device.py",
        f"{RE}/changing_default_device.py",
        fast=True,
        logs_nothing="prints devices only",
    ),
    # custom autograd.Functions for double backward: gradcheck + gradgradcheck of
    # functions saving inputs, outputs, intermediates returned as outputs, and a backward
    # that is itself a custom Function
    Entry(
        "custom_function_double_backward",
        "custom_function_double_backward_tutorial.py",
        "pytorch/tutorials intermediate_source/custom_function_double_backward_tutorial.py",
        logs_nothing="runs gradcheck and gradgradcheck (which raise on a mismatch); prints nothing",
    ),
    # custom Functions for conv2d and batch norm (conv_transpose2d in the backward,
    # once_differentiable, gradcheck), fused into one, trained with Adadelta + StepLR
    # against nn.Conv2d + nn.BatchNorm2d(track_running_stats=False)
    Entry(
        "custom_function_conv_bn",
        "custom_function_conv_bn_tutorial.py",
        "pytorch/tutorials intermediate_source/custom_function_conv_bn_tutorial.py",
    ),
    # spatial transformer network: F.affine_grid + F.grid_sample from an identity theta
    # (sampling points on pixel centres), Dropout2d, nll_loss(size_average=False)
    Entry(
        "spatial_transformer",
        "spatial_transformer_tutorial.py",
        "pytorch/tutorials intermediate_source/spatial_transformer_tutorial.py",
    ),
    # grad_fn._saved_self/_saved_result, saved_tensors_hooks (pack/unpack returning
    # tensors, ints, tuples, strings, temp files), save_on_cpu. lazytorch keeps no
    # torch-style saved tensors and records no pack event: the first _saved_ read refuses
    Entry(
        "autograd_saved_tensors_hooks",
        "autograd_saved_tensors_hooks_tutorial.py",
        "pytorch/tutorials intermediate_source/autograd_saved_tensors_hooks_tutorial.py",
        xfail="NotImplementedError: grad_fn._saved_self: lazytorch's backward ops keep no",
    ),
    # forward hooks that register Tensor.register_hook on each leaf module's output, two
    # MLPs (BatchNorm1d vs Identity, sigmoid) trained side by side with SGD + momentum
    Entry(
        "visualizing_gradients",
        "visualizing_gradients_tutorial.py",
        "pytorch/tutorials intermediate_source/visualizing_gradients_tutorial.py",
    ),
    # eriklindernoren/PyTorch-GAN (MIT): MNIST -> 32 synthetic images (4 batches of 8),
    # save_image -> a stand-in; the WGANs train the generator every 2nd batch
    Entry("pgan_gan", "pytorch_gan/gan.py", f"{PG}gan/gan.py", args=GAN_ARGS),
    Entry("pgan_dcgan", "pytorch_gan/dcgan.py", f"{PG}dcgan/dcgan.py", args=GAN_ARGS),
    Entry("pgan_wgan", "pytorch_gan/wgan.py", f"{PG}wgan/wgan.py", args=f"{GAN_ARGS} --n_critic 2"),
    Entry(
        "pgan_wgan_gp",
        "pytorch_gan/wgan_gp.py",
        f"{PG}wgan_gp/wgan_gp.py",
        args=f"{GAN_ARGS} --n_critic 2",
    ),
    Entry(
        "pgan_wgan_div",
        "pytorch_gan/wgan_div.py",
        f"{PG}wgan_div/wgan_div.py",
        args=f"{GAN_ARGS} --n_critic 2",
    ),
    Entry("pgan_cgan", "pytorch_gan/cgan.py", f"{PG}cgan/cgan.py", args=GAN_ARGS),
    Entry("pgan_acgan", "pytorch_gan/acgan.py", f"{PG}acgan/acgan.py", args=GAN_ARGS),
    Entry("pgan_infogan", "pytorch_gan/infogan.py", f"{PG}infogan/infogan.py", args=GAN_ARGS),
    Entry("pgan_ebgan", "pytorch_gan/ebgan.py", f"{PG}ebgan/ebgan.py", args=GAN_ARGS),
    Entry("pgan_lsgan", "pytorch_gan/lsgan.py", f"{PG}lsgan/lsgan.py", args=GAN_ARGS),
    Entry(
        "pgan_relativistic_gan",
        "pytorch_gan/relativistic_gan.py",
        f"{PG}relativistic_gan/relativistic_gan.py",
        args=GAN_ARGS,
    ),
    Entry("pgan_aae", "pytorch_gan/aae.py", f"{PG}aae/aae.py", args=GAN_ARGS),
    Entry("pgan_sgan", "pytorch_gan/sgan.py", f"{PG}sgan/sgan.py", args=GAN_ARGS),
    # 8 unaligned 3x32x32 pairs, batch 1, one residual block; ReplayBuffer (Python's random),
    # LambdaLR, InstanceNorm2d, ReflectionPad2d; the test loader runs in a worker process.
    # Chaotic: float32 losses differ by 9e-7 at step 1, 8e-6 at step 3, 2.7e-4 at step 4 and
    # 1e-2 by step 13; the same run in float64 (set_default_dtype before the models) matches
    # torch's float64 to 1e-11 over all 24 steps, with the same growth (4e-16 at step 1,
    # 1.3e-12 at step 4) (README.md, "Chaotic scripts")
    Entry(
        "pgan_cyclegan",
        "pytorch_gan/cyclegan/cyclegan.py",
        f"{PG}cyclegan/cyclegan.py + models.py + utils.py",
        args="--n_epochs 1 --decay_epoch 0 --img_height 32 --img_width 32 --n_residual_blocks 1 "
        "--n_cpu 0",
        chaotic_after=4,
    ),
    # ImageDataset keeps its default 128x128 images and 64x64 masks (it does not read
    # opt.img_size): 4 train images in 2 batches; ConvTranspose2d, BatchNorm2d(eps=0.8),
    # InstanceNorm2d, masked writes filled_samples[:, :, i:i+m, i:i+m] = gen_mask
    Entry(
        "pgan_context_encoder",
        "pytorch_gan/context_encoder/context_encoder.py",
        f"{PG}context_encoder/context_encoder.py + models.py + datasets.py",
        args="--n_epochs 1 --batch_size 2 --n_cpu 0",
    ),
    # aladdinpersson/Machine-Learning-Collection ML/Pytorch/ (MIT): Basics/ tutorials on
    # synthetic MNIST
    Entry(
        "aladdin_simple_cnn",
        "aladdin_simple_cnn.py",
        f"{AP}Basics/pytorch_simple_CNN.py",
        log_conversions=True,
    ),
    # a two-layer bidirectional LSTM read at its last step (out[:, -1, :])
    Entry(
        "aladdin_bidirectional_lstm",
        "aladdin_bidirectional_lstm.py",
        f"{AP}Basics/pytorch_bidirectional_lstm.py",
        log_conversions=True,
    ),
    # a two-layer LSTM whose every step's output feeds the classifier (RNN and GRU classes
    # defined, unused)
    Entry(
        "aladdin_rnn_gru_lstm",
        "aladdin_rnn_gru_lstm.py",
        f"{AP}Basics/pytorch_rnn_gru_lstm.py",
        log_conversions=True,
    ),
    # kaiming_uniform_ / constant_ over self.modules(); prints the parameters
    Entry(
        "aladdin_init_weights",
        "aladdin_init_weights.py",
        f"{AP}Basics/pytorch_init_weights.py",
    ),
    # torch.cuda.amp.GradScaler and autocast on a CPU: both warn and run disabled
    Entry(
        "aladdin_mixed_precision",
        "aladdin_mixed_precision.py",
        f"{AP}Basics/pytorch_mixed_precision_example.py",
        log_conversions=True,
    ),
    # torch.backends.mps.is_available(); the accuracy is a tensor formatted by an f-string
    Entry(
        "aladdin_simple_fullynet",
        "aladdin_simple_fullynet.py",
        f"{AP}Basics/pytorch_simple_fullynet.py",
    ),
    # WGAN: RMSprop, five critic steps per generator step with backward(retain_graph=True),
    # weight clipping through p.data.clamp_, InstanceNorm2d(affine) and ConvTranspose2d.
    # The generator's gradients are 1e-7 to 2e-5 and RMSprop's first steps move each weight
    # by about lr * sign(grad), so rounding in those gradients (1e-5 relative, in torch and
    # lazytorch alike) becomes weight differences: from the first generator step (step 5)
    # lazytorch float32 parts from a float64 run of the same weights and data about 4x per
    # step (3e-9 at step 5, 1.4e-7 at step 8, 3e-6 at step 11); torch float32 parts from it
    # later here (1.6e-6 at step 17) and earlier in another instance (3e-6 at step 23, where
    # lazytorch stays at 2e-9). The script run in float64 under both libraries (its own
    # draws) gives 24 losses that agree to 1e-17 (README.md, "Chaotic scripts"). Compared up
    # to step 7.
    Entry(
        "aladdin_wgan",
        "aladdin_wgan/train.py",
        f"{AP}GANs/3. WGAN/train.py + model.py",
        chaotic_after=8,
    ),
    # ProGAN with the WGAN-GP loss: the gradient penalty's torch.autograd.grad(create_graph=
    # True) through equalized-lr convolutions, minibatch std (torch.std(dim=0)), PixelNorm,
    # F.interpolate and the fade-in; two sizes (4x4, 8x8); GradScaler and autocast disabled
    # on a CPU; checkpoints saved with torch.save
    Entry(
        "aladdin_progan",
        "aladdin_progan/train.py",
        f"{AP}GANs/ProGAN/train.py + model.py + utils.py + config.py",
    ),
    # WeightedRandomSampler (oversampling a rare class) behind a DataLoader; counts per class
    Entry(
        "aladdin_imbalanced_classes",
        "aladdin_imbalanced_classes.py",
        f"{AP}Basics/Imbalanced_classes/main.py",
        fast=True,
    ),
    # an MLP VAE: BCELoss(reduction="sum") plus a KL term through torch.log(sigma.pow(2));
    # then encodes a digit of each class (bool(y == idx) on int labels) and decodes samples.
    # sigma is a linear layer's output, so log(sigma^2) of the values near 0 amplifies
    # rounding: against the same training in float64 (same weights and data), torch float32
    # is 0.33 off at step 1, 9.7 at step 2 and 83 at step 3 (losses about 2e4), lazytorch
    # float32 0.54, 7.4 and 16; run in float64 the two libraries agree to 2e-6 (relative
    # 1e-10) over the 20 steps (README.md, "Chaotic scripts"). Compared up to step 1.
    Entry(
        "aladdin_vae",
        "aladdin_vae/train.py",
        f"{AP}more_advanced/VAE/train.py + model.py",
        chaotic_after=2,
    ),
    # einsum in its list form (torch.einsum(eq, [a, b])), masked_fill with -1e20, an
    # expanded tril mask; an encoder-decoder forward
    Entry(
        "aladdin_transformer_from_scratch",
        "aladdin_transformer_from_scratch.py",
        f"{AP}more_advanced/transformer_from_scratch/transformer_from_scratch.py",
        logs_nothing="prints the device and the output's shape, which lazytorch knows "
        "without computing the forward",
    ),
    # depthwise (groups=hidden_dim) convolutions, squeeze-excitation, SiLU, stochastic depth
    # (torch.rand(...) < p in training mode), dropout; one forward
    Entry(
        "aladdin_efficientnet",
        "aladdin_efficientnet.py",
        f"{AP}CNN_architectures/pytorch_efficientnet.py",
        logs_nothing="prints the output's shape, which lazytorch knows without computing "
        "the forward",
    ),
    # DCGAN: an in-place LeakyReLU(0.2, True) after BatchNorm in the discriminator, Sigmoid +
    # BCELoss, Adam betas (0.5, 0.999), losses formatted by an f-string
    Entry(
        "aladdin_dcgan",
        "aladdin_dcgan/train.py",
        f"{AP}GANs/2. DCGAN/train.py + model.py",
    ),
    # U-Net segmentation: ConvTranspose2d upsampling concatenated with the skip connections,
    # in-place ReLU after BatchNorm, BCEWithLogitsLoss, GradScaler/autocast disabled on a
    # CPU; accuracy and dice score printed before training (compared) and after
    Entry(
        "aladdin_unet",
        "aladdin_unet/train.py",
        f"{AP}image_segmentation/semantic_segmentation_unet/train.py + model.py + utils.py",
    ),
]
# jadore801120/attention-is-all-you-need-pytorch (MIT): the Multi30k pickle -> 4 synthetic
# training and 2 validation batches of 8 sentence pairs (tokens padded with <blank>);
# ScheduledOptim over Adam, label smoothing by one_hot/scatter, masked_select, shared
# embeddings and projection; a checkpoint saved each epoch
JADORE = "jadore801120/attention-is-all-you-need-pytorch train.py + transformer/"
JADORE_ARGS = (
    "-data_pkl synthetic -epoch 2 -b 8 -d_model 32 -d_inner_hid 64 -d_k 8 -d_v 8 -n_head 4 "
    "-n_layers 2 -warmup 10 -output_dir out -no_cuda -seed 1"
)
CORPUS += [
    Entry(
        "jadore_transformer",
        "attention_is_all_you_need/train.py",
        JADORE,
        args=f"{JADORE_ARGS} -embs_share_weight -proj_share_weight -label_smoothing",
    ),
    # separate embeddings, a separate output projection scaled at the embedding, summed
    # cross_entropy with ignore_index
    Entry(
        "jadore_transformer_unshared",
        "attention_is_all_you_need/train.py",
        JADORE,
        args=f"{JADORE_ARGS} -scale_emb_or_prj emb",
    ),
]
# lucidrains/vit-pytorch (MIT): train_vit_decorr.py, a ViT built with einops (Rearrange
# patches, rearrange heads, repeat the cls token) with a decorrelation auxiliary loss
# (einops.einsum and reduce over the stacked layer inputs); CIFAR100 -> 32 synthetic images
CORPUS += [
    Entry(
        "lucidrains_vit_decorr",
        "vit_pytorch/train_vit_decorr.py",
        "lucidrains/vit-pytorch train_vit_decorr.py + vit_pytorch/vit_with_decorr.py",
    ),
]
# bentrevett/pytorch-seq2seq (MIT): notebook 1, an LSTM encoder-decoder with teacher forcing
# (Python's random), outputs written step by step into a zeros tensor, CrossEntropyLoss with
# ignore_index, clip_grad_norm_, the best model saved and loaded back for the test loss;
# Multi30k -> synthetic token ids padded by pad_sequence
CORPUS += [
    Entry(
        "bentrevett_seq2seq_lstm",
        "bentrevett_seq2seq_lstm.py",
        "bentrevett/pytorch-seq2seq 1 - Sequence to Sequence Learning with Neural Networks.ipynb",
    ),
    # notebook 3: a bidirectional GRU encoder, additive attention (softmax over the source
    # positions, torch.bmm), weights from normal_ and constant_
    Entry(
        "bentrevett_seq2seq_attention",
        "bentrevett_seq2seq_attention.py",
        "bentrevett/pytorch-seq2seq 3 - Neural Machine Translation by Jointly Learning to Align "
        "and Translate.ipynb",
    ),
]
# bentrevett/pytorch-sentiment-analysis (MIT): notebook 2, a bidirectional LSTM over
# pack_padded_sequence(enforce_sorted=False) / pad_packed_sequence, orthogonal_ and
# xavier_normal_ init, embedding weights replaced through `.data =`; IMDB -> synthetic ids
CORPUS += [
    Entry(
        "bentrevett_sentiment_lstm",
        "bentrevett_sentiment_lstm.py",
        "bentrevett/pytorch-sentiment-analysis 2 - Recurrent Neural Networks.ipynb",
    ),
]
# generative models (helper h1's additions)
CORPUS += [
    # ikostrikov/pytorch-flows (MIT): density estimation on a synthetic POWER (500 x 6, 5
    # batches of 100, 2 epochs); MADE with masked linears, BatchNormFlow (running stats set
    # through momentum 0/1 and a no_grad pass), RealNVP couplings, Glow's LU-decomposed 1x1
    # (scipy's lu of an orthogonal_ init) and slogdet, copy.deepcopy of the best model
    *[
        Entry(
            f"ikostrikov_flows_{flow.replace('-', '_')}",
            "ikostrikov_flows/main.py",
            "ikostrikov/pytorch-flows main.py + flows.py",
            args=f"{FLOWS_ARGS} --flow {flow}",
        )
        for flow in ("maf", "realnvp", "glow", "maf-split-glow")
    ],
    # bot66/MNISTDiffusion (MIT): a ShuffleNet-style UNet (grouped 3x3 convs, channel
    # shuffle, BatchNorm, SiLU(inplace), bilinear Upsample, an Embedding of the timestep)
    # trained as a DDPM noise predictor on 64 synthetic images (8 steps of 8) with AdamW and
    # OneCycleLR, an AveragedModel EMA (use_buffers) every 2 steps, then 10 clipped reverse
    # steps of sampling under no_grad (not compared: nothing of it is logged)
    Entry(
        "bot66_mnist_diffusion",
        "bot66_mnist_diffusion/train_mnist.py",
        "bot66/MNISTDiffusion train_mnist.py + model.py + unet.py + utils.py",
        args="--batch_size 8 --epochs 1 --timesteps 10 --model_base_dim 8 --n_samples 4 "
        "--log_freq 1 --model_ema_steps 2 --cpu",
    ),
    # karpathy/pytorch-made (MIT): MADE on synthetic binarized MNIST (300 train rows, 3 steps
    # of 100 an epoch, 2 epochs); order-agnostic training over 2 mask sets resampled every
    # 2 steps (numpy RandomState permutations copied into uint8 -> float mask buffers),
    # binary_cross_entropy_with_logits(size_average=False), StepLR.step(epoch), test
    # passes under set_grad_enabled(False) averaging the logits of 2 mask samples
    Entry(
        "karpathy_made",
        "karpathy_made/run.py",
        "karpathy/pytorch-made run.py + made.py",
        args="-d synthetic -q 64 -n 2 -r 2 -s 2",
    ),
    # dome272/Diffusion-Models-pytorch (Apache-2.0): its DDPM UNet (23M parameters: GroupNorm,
    # GELU, MaxPool2d, nn.MultiheadAttention(batch_first) self-attention, bilinear Upsample
    # with align_corners, sinusoidal time encoding) trained with AdamW on 8 synthetic 16x16
    # images (4 steps of 2), then 9 reverse steps of sampling under no_grad (not compared)
    Entry(
        "dome272_ddpm",
        "dome272_ddpm/ddpm.py",
        "dome272/Diffusion-Models-pytorch ddpm.py + modules.py + utils.py",
    ),
    # rosinality/vq-vae-2-pytorch (MIT): VQ-VAE-2 (two levels, Sonnet's EMA codebook: buffers
    # updated in place under training, one_hot of an argmax, F.embedding of a buffer, the
    # straight-through estimator) on 256 synthetic 32x32 images, 2 steps of the script's
    # batch of 128; its scheduler.py subclasses lr_scheduler._LRScheduler. With --sched cycle
    # (20 steps, 10 epochs) it matched too, but takes minutes
    Entry(
        "rosinality_vqvae",
        "rosinality_vqvae/train_vqvae.py",
        "rosinality/vq-vae-2-pytorch train_vqvae.py + vqvae.py + scheduler.py + distributed/",
        args="--size 32 --epoch 1 synthetic",
    ),
    # rosinality/glow-pytorch (MIT): Glow (2 blocks of 2 flows: ActNorm with a data-dependent
    # first-batch init and a uint8 flag buffer, invertible 1x1 conv (LU with scipy, or
    # torch.qr + slogdet in float64 with --no_lu), additive or affine coupling with
    # ZeroConv2d (F.pad value=1), squeeze, learned priors) through nn.DataParallel on 16
    # synthetic 16x16 images, batch 4; the first iteration only initializes (no_grad)
    Entry(
        "rosinality_glow",
        "rosinality_glow/train.py",
        "rosinality/glow-pytorch train.py + model.py",
        args=f"{GLOW_ARGS} synthetic",
    ),
    Entry(
        "rosinality_glow_affine_no_lu",
        "rosinality_glow/train.py",
        "rosinality/glow-pytorch train.py + model.py",
        args=f"{GLOW_ARGS} --affine --no_lu synthetic",
    ),
    # cloneofsimo/minRF (Apache-2.0): rectified flow with a DiT_Llama (patchify einsum,
    # adaLN modulation, RMSNorm, label dropout, scaled_dot_product_attention, rotary
    # embeddings as complex numbers) on 64 synthetic 32x32 MNIST images, 2 steps of 32, then
    # 5 classifier-free-guided sampling steps. The rotary table is complex (torch.polar,
    # view_as_complex, a product, view_as_real: lazytorch.ops.complex)
    Entry(
        "cloneofsimo_minrf",
        "cloneofsimo_minrf/rf.py",
        "cloneofsimo/minRF rf.py + dit.py",
    ),
]
# Llama-family and modern transformer training code
CORPUS += [
    # lucidrains/PaLM-pytorch (MIT): PaLM on synthetic enwik8 bytes: parallel attention and
    # SwiGLU feed-forward blocks, multi-query attention through einops/einsum, rotary
    # embeddings (cos/sin of a cached table, rotate_half), a bias-free LayerNorm with a beta
    # buffer, tied embedding and output weights, gradient accumulation, clip_grad_norm_, a
    # validation loss and 8 tokens generated with top-k filtering (topk, scatter_) and
    # torch.multinomial
    Entry(
        "lucidrains_palm",
        "lucidrains_palm/train.py",
        "lucidrains/PaLM-pytorch train.py + palm_pytorch/",
    ),
    # lucidrains/x-transformers (MIT): the enwik8 example on synthetic bytes: a Decoder with
    # rotary embeddings (computed under a torch.amp.autocast('cuda', enabled=False)
    # decorator), pre-LayerNorm attention through its Attend (einsum, causal mask), a
    # TransformerWrapper with absolute positions, the AutoregressiveWrapper's loss, gradient
    # accumulation, clip_grad_norm_, a validation loss and 8 tokens generated with a KV cache
    # (cache_kv=True) and top-k filtering
    Entry(
        "lucidrains_x_transformers",
        "lucidrains_x_transformers/train.py",
        "lucidrains/x-transformers examples/enwik8_simple/train.py + x_transformers/",
    ),
]
# udacity/deep-learning-v2-pytorch (MIT): the course's solution notebooks as scripts
UD = "udacity/deep-learning-v2-pytorch "
CORPUS += [
    # char-rnn: an LSTM over one-hot characters (numpy one-hot -> from_numpy), hidden state
    # from weight.new(...).zero_() detached through .data, clip_grad_norm_, a validation
    # pass every 4 steps, a checkpoint saved and loaded back, top-k sampling with numpy
    Entry(
        "udacity_char_rnn",
        "udacity_char_rnn.py",
        f"{UD}recurrent-neural-networks/char-rnn/Character_Level_RNN_Solution.ipynb",
    ),
    # sentiment-rnn: text cleaning and Counter vocabulary, left-padded int64 features,
    # TensorDataset / DataLoader(shuffle), Embedding -> LSTM -> last step -> Sigmoid,
    # BCELoss, clip_grad_norm_, torch.round / eq accuracy through numpy, predict on raw text
    Entry(
        "udacity_sentiment_rnn",
        "udacity_sentiment_rnn.py",
        f"{UD}sentiment-rnn/Sentiment_RNN_Solution.ipynb",
    ),
    # gan-mnist: MLP GAN, leaky_relu and dropout, BCEWithLogitsLoss with label smoothing,
    # two Adams, latents from numpy's uniform via from_numpy().float(), generator samples
    # (still attached to the graph) pickled and loaded back
    Entry("udacity_gan_mnist", "udacity_gan_mnist.py", f"{UD}gan-mnist/MNIST_GAN_Solution.ipynb"),
    # word2vec negative sampling: subsampled skip-gram batches, two Embeddings filled by
    # .weight.data.uniform_, torch.multinomial over a float64 unigram^0.75 distribution,
    # bmm / sigmoid().log() loss, cosine similarities (mm over norms) and topk of the nearest
    Entry(
        "udacity_negative_sampling",
        "udacity_negative_sampling/negative_sampling.py",
        f"{UD}word2vec-embeddings/Negative_Sampling_Solution.ipynb + utils.py",
    ),
    # time-series RNN: nn.RNN (2 layers for the shape check, then 1) on sine windows built
    # with numpy (torch.Tensor(ndarray) from float64), hidden state carried across steps
    # through .data, MSELoss, Adam; 75 steps
    Entry(
        "udacity_simple_rnn",
        "udacity_simple_rnn.py",
        f"{UD}recurrent-neural-networks/time-series/Simple_RNN.ipynb",
    ),
    # convolutional autoencoder: Conv2d / MaxPool2d encoder, ConvTranspose2d(stride 2)
    # decoder, F.sigmoid output, MSELoss against the input, running loss from item()
    Entry(
        "udacity_conv_autoencoder",
        "udacity_conv_autoencoder.py",
        f"{UD}autoencoder/convolutional-autoencoder/Convolutional_Autoencoder_Solution.ipynb",
    ),
    # intro-to-pytorch part 5: log_softmax + NLLLoss (reduction "sum", then mean), topk,
    # labels.view(*shape) equality, equals.type(torch.FloatTensor), for/else epochs, a
    # tensor-valued running test loss formatted with "{:.3f}", dropout in train / eval
    Entry(
        "udacity_inference_validation",
        "udacity_inference_validation.py",
        f"{UD}intro-to-pytorch/Part 5 - Inference and Validation (Solution).ipynb",
    ),
    # intro-to-pytorch part 3: CrossEntropyLoss on logits, LogSoftmax + NLLLoss, autograd on
    # x**2, grads printed before/after backward, images.resize_(64, 784) on a loader batch,
    # one SGD step printed, then a for/else training loop
    Entry(
        "udacity_training_networks",
        "udacity_training_networks.py",
        f"{UD}intro-to-pytorch/Part 3 - Training Neural Networks (Solution).ipynb",
    ),
    # batch-norm: BatchNorm1d MLP against a plain one, SGD; tests in train mode (batch
    # statistics, running stats updated) and in eval mode, per-class accuracy through
    # np.squeeze(tensor), list indexing by a 0-d tensor, torch.max(output, 1)
    Entry(
        "udacity_batch_norm", "udacity_batch_norm.py", f"{UD}batch-norm/Batch_Normalization.ipynb"
    ),
]
# ShusenTang/Dive-into-DL-PyTorch (Apache-2.0): the book's notebooks as scripts
DD = "ShusenTang/Dive-into-DL-PyTorch code/"
CORPUS += [
    # 2.2: tensor basics: views that alias (y = x[0, :]; y += 1), add(out=), x.view after
    # in-place updates, new_ones / randn_like, numpy() and from_numpy() sharing memory
    Entry(
        "shusentang_tensor",
        "shusentang_tensor.py",
        f"{DD}chapter02_prerequisite/2.2_tensor.ipynb",
        fast=True,
    ),
    # 2.3: autograd basics: grad_fn, accumulation, z.backward(v), no_grad, x.data *= 100
    Entry(
        "shusentang_autograd",
        "shusentang_autograd.py",
        f"{DD}chapter02_prerequisite/2.3_autograd.ipynb",
        fast=True,
    ),
    # 4.1: Module subclasses, add_module, ModuleList / ModuleDict, a plain-list Module that
    # has no parameters, FancyMLP's item()-driven while loop with in-place x /= 2
    Entry(
        "shusentang_model_construction",
        "shusentang_model_construction.py",
        f"{DD}chapter04_DL_computation/4.1_model-construction.ipynb",
        fast=True,
    ),
    # 4.2: named_parameters, grads before and after backward, init.normal_ / constant_, a
    # custom init under no_grad (uniform_ then *= mask), param.data += 1, shared layers
    Entry(
        "shusentang_parameters",
        "shusentang_parameters.py",
        f"{DD}chapter04_DL_computation/4.2_parameters.ipynb",
        fast=True,
    ),
    # 4.4: custom layers, ParameterList.append, ParameterDict.update, torch.mm chains. Its
    # one item() is y.mean() of a centered layer output: torch 0.0, lazytorch 0.0 compiled
    # but -2.3e-9 when the NumPy interpreter runs it (with tiering on, as benchmarks/
    # realworld.py runs, either may answer), and a run whose only value is 0 has no scale:
    # the rule then allows no difference. Rounding noise either way; the tests run untiered.
    Entry(
        "shusentang_custom_layer",
        "shusentang_custom_layer.py",
        f"{DD}chapter04_DL_computation/4.4_custom-layer.ipynb",
        fast=True,
    ),
    # 10.12: GRU encoder-decoder with additive attention (expand_as, cat, softmax over time),
    # a loss masked after <eos> (mask * (y != eos).float()), CrossEntropyLoss(reduction=
    # "none"), two Adams, greedy translation with argmax / item() and BLEU
    Entry(
        "shusentang_machine_translation",
        "shusentang_machine_translation.py",
        f"{DD}chapter10_natural-language-processing/10.12_machine-translation.ipynb",
    ),
    # 10.3: skip-gram with negative sampling: a Dataset of Python lists, a DataLoader with
    # collate_fn and 4 worker processes, bmm of two Embeddings, binary_cross_entropy_with_logits
    # (reduction "none", weight=mask), Adam, cosine similarity topk printed with "%.3f"
    Entry(
        "shusentang_word2vec",
        "shusentang_word2vec.py",
        f"{DD}chapter10_natural-language-processing/10.3_word2vec-pytorch.ipynb",
    ),
]
# dsgiitr/d2l-pytorch (Apache-2.0): the book's notebooks ported to PyTorch, as scripts
D2L = "dsgiitr/d2l-pytorch "
CORPUS += [
    # linear regression: numpy data through from_numpy().float(), weights replaced by
    # assigning .data, MSELoss(reduction="sum"), SGD, an epoch loss printed through format
    Entry(
        "dsgiitr_linear_regression",
        "dsgiitr_linear_regression.py",
        f"{D2L}Ch05_Linear_Neural_Networks/Concise_Implementation_of_Linear_Regression.ipynb",
    ),
    # parameter management: Module.apply initializers, printed state_dicts, element-wise
    # writes through chained indexing (weight.data[i][j] = 0) under Python comparisons,
    # shared blocks compared with ==
    Entry(
        "dsgiitr_parameter_management",
        "dsgiitr_parameter_management.py",
        f"{D2L}Ch07_Deep_Learning_Computation/Parameter_Management.ipynb",
        fast=True,
    ),
]
TCN = "locuslab/TCN TCN/"
CORPUS += [
    # temporal convolution networks: weight_norm'd dilated causal Conv1d blocks (padding
    # chomped off the right end), residual 1x1 convolutions; the adding problem (MSE, Adam)
    # and the copying-memory task (cross entropy over every step, RMSprop, gradient clipping)
    Entry(
        "tcn_adding_problem",
        "locuslab_tcn/add_test.py",
        f"{TCN}adding_problem/add_test.py + model.py + utils.py + tcn.py",
        args="--cuda --epochs 1 --seq_len 40 --levels 3 --nhid 12 --ksize 4 --log-interval 4",
    ),
    Entry(
        "tcn_copy_memory",
        "locuslab_tcn/copymem_test.py",
        f"{TCN}copy_memory/copymem_test.py + model.py + utils.py + tcn.py",
        args="--cuda --epochs 2 --blank_len 20 --levels 3 --ksize 4 --log-interval 2",
    ),
    # Hierarchical attention network: documents packed into sentences and sentences into
    # words (pack_padded_sequence with enforce_sorted=False, PackedSequence rebuilt from
    # .data and the sorted/unsorted indices), bidirectional GRUs over packed sequences, a
    # softmax computed by hand over pad_packed_sequence's zero padding; Adam, lr decay
    Entry(
        "sgrvinod_han",
        "sgrvinod_han/train.py",
        "sgrvinod/a-PyTorch-Tutorial-to-Text-Classification train.py + model.py + utils.py",
    ),
    # SRResNet: residual blocks of Conv2d/BatchNorm/PReLU, sub-pixel upsampling
    # (nn.PixelShuffle) x4, tanh output against [-1, 1] targets, MSE, Adam; the data through
    # PIL crops and bicubic resizes of in-memory PNGs, imagenet-normalized; the whole model
    # and optimizer saved with torch.save each epoch
    Entry(
        "sgrvinod_srresnet",
        "sgrvinod_srresnet/train_srresnet.py",
        "sgrvinod/a-PyTorch-Tutorial-to-Super-Resolution train_srresnet.py + models.py + utils.py",
    ),
    # Kipf's GCN: a scipy-normalized adjacency turned into torch.sparse.FloatTensor(indices,
    # values, shape), torch.spmm in each graph convolution, full-batch Adam with weight
    # decay, NLL over index tensors; validation in eval mode each epoch
    Entry("tkipf_pygcn", "tkipf_pygcn/train.py", "tkipf/pygcn pygcn/train.py", args="--epochs 12"),
    # metric learning: a softmax baseline, a siamese net with a contrastive loss, a triplet
    # net with a triplet loss, and online pair / triplet mining within balanced batches (pair
    # and triplet indices found with NumPy from the embeddings' distance matrix, NumPy arrays
    # indexing tensors and tensors indexing NumPy arrays); PReLU, StepLR, Adam
    Entry(
        "siamese_triplet_mnist",
        "siamese_triplet/experiments_mnist.py",
        "adambielski/siamese-triplet Experiments_MNIST.ipynb + losses/networks/trainer/utils.py",
        # Chaotic in float32 (README.md): the baseline's Adam at lr 1e-2 drives its loss from
        # 2.4 to 19 by step 2, and lazytorch float32 parts from torch by 1.6e-5 at step 1,
        # 3.4e-4 at step 2 and 3e-3 at step 5; the siamese stage (steps 6-15) amplifies
        # rounding in torch itself: torch with 1 and with 2 threads differs by 3e-4 at step 10,
        # 2.7e-3 at step 12 and 1.5e-2 at step 15. The same script in float64 under both
        # libraries agrees to 5e-14 on all 34 losses (test_float64_runs.py).
        chaotic_after=2,
    ),
    # CRNN text recognition: a VGG-style CNN (BatchNorm, (2, 1) max pools) read as a
    # sequence by two bidirectional LSTMs, CTCLoss(reduction='sum', zero_infinity=True) over
    # log_softmax, gradient-norm clipping, RMSprop; greedy CTC decoding in the evaluation
    Entry("gitycc_crnn", "gitycc_crnn/train.py", "GitYCC/crnn-pytorch src/train.py + model.py"),
    # U-Net on the notebook's simulated shapes: double convolutions, max pools, bilinear
    # nn.Upsample(align_corners=True) and skip concatenations, BCE-with-logits plus a dice
    # loss on sigmoid outputs, Adam with StepLR, best weights kept with copy.deepcopy of the
    # state_dict and loaded back; train/val phases under torch.set_grad_enabled(phase)
    Entry("usuyama_unet", "usuyama_unet/train_unet.py", "usuyama/pytorch-unet pytorch_unet.ipynb"),
    # GAT (Diego999/pyGAT): dense attention over a masked N x N score matrix (torch.where with
    # -9e15), eight heads registered with add_module, Adam with weight decay, a checkpoint
    # per epoch (torch.save, glob, os.remove) and the best one loaded back
    Entry(
        "pygat",
        "diego_pygat/train.py",
        "Diego999/pyGAT train.py + layers.py + models.py",
        args="--epochs 6",
    ),
    # the sparse GAT: a custom autograd.Function over torch.sparse_coo_tensor (sparse @ dense,
    # a._indices(), a.t() in backward, ctx.needs_input_grad), adj.nonzero().t() edge lists
    Entry(
        "pygat_sparse",
        "diego_pygat/train.py",
        "Diego999/pyGAT train.py + layers.py + models.py",
        args="--sparse --epochs 6",
    ),
    # rasbt/deeplearning-models (MIT): torch.autograd.grad of one output with retain_graph
    # (leaves and intermediates, one at a time and as a tuple), retain_grad, register_hook on
    # leaves and non-leaves
    Entry(
        "rasbt_manual_gradients",
        "rasbt_manual_gradients.py",
        "rasbt/deeplearning-models pytorch_ipynb/mechanics/manual-gradients.ipynb",
        fast=True,
    ),
    # three trainings of one MLP: clip_grad_value_, parameter hooks that return a clamped
    # gradient, clip_grad_norm_(norm_type=2); a 0-d loss and accuracy tensors in %-formats
    Entry(
        "rasbt_gradclipping_mlp",
        "rasbt_gradclipping_mlp.py",
        "rasbt/deeplearning-models pytorch_ipynb/tricks/gradclipping_mlp.ipynb",
        log_conversions=True,
    ),
    # a graph convolution over the pixel grid: a Gaussian adjacency from scipy's cdist,
    # normalized and registered as a buffer, expanded to (B, N, N) and bmm'd with the images
    Entry(
        "rasbt_gnn_basic",
        "rasbt_gnn_basic.py",
        "rasbt/deeplearning-models pytorch_ipynb/gnn/gnn-basic-1.ipynb",
        log_conversions=True,
    ),
    # an MLP trained with a hand-written backward pass and no autograd: normal_ on zeros,
    # torch.FloatTensor(n, c).zero_() then scatter_ with a scalar, in-place -= updates of
    # plain tensors; costs read through %-formats
    Entry(
        "rasbt_mlp_from_scratch",
        "rasbt_mlp_from_scratch.py",
        "rasbt/deeplearning-models pytorch_ipynb/mlp/mlp-fromscratch__sigmoid-mse.ipynb",
        log_conversions=True,
    ),
    # Network-in-Network with filter response normalization: parameters registered with
    # register_parameter from normal_ on empty, mean over (2, 3) with keepdims=, rsqrt of
    # an eps tensor attribute moved with .to, a learned threshold through torch.max(a, b)
    Entry(
        "rasbt_nin_frn",
        "rasbt_nin_frn.py",
        "rasbt/deeplearning-models pytorch_ipynb/cnn/nin-cifar10_filter-response-norm.ipynb",
        log_conversions=True,
    ),
    # one output unit's weights shared by all ten classes (a (B, 1) linear output plus a
    # (10,) bias Parameter made with torch.tensor(tensor, dtype=)), SGD at lr 0.1
    Entry(
        "rasbt_cnn_weight_sharing",
        "rasbt_cnn_weight_sharing.py",
        "rasbt/deeplearning-models pytorch_ipynb/mechanics/cnn-weight-sharing.ipynb",
        log_conversions=True,
    ),
    # a cyclical learning rate set by hand in optimizer.param_groups every step (a range test,
    # then triangular, triangular2 and exp_range cycles), SubsetRandomSampler splits from
    # NumPy indices, a [[features, targets]] list passed as a data loader
    Entry(
        "rasbt_cyclical_lr",
        "rasbt_cyclical_lr.py",
        "rasbt/deeplearning-models pytorch_ipynb/tricks/cyclical-learning-rate.ipynb",
        log_conversions=True,
    ),
    # He initialization written through detached aliases of the parameters
    # (nn.init.kaiming_normal_(m.weight.detach()), m.bias.detach().zero_()) over
    # self.modules(); SGD at lr 0.05
    Entry(
        "rasbt_cnn_he_init",
        "rasbt_cnn_he_init.py",
        "rasbt/deeplearning-models pytorch_ipynb/cnn/cnn-he-init.ipynb",
        log_conversions=True,
    ),
]
# karpathy/nn-zero-to-hero (MIT): the makemore lectures' notebooks as scripts
NZH = "karpathy/nn-zero-to-hero lectures/makemore/"
CORPUS += [
    # bigrams: a count matrix filled one element at a time (N[ix1, ix2] += 1 on int32), a
    # log-likelihood summed over every bigram as one chain of 0-d tensors, multinomial with
    # a seeded Generator; then a one-hot "network" trained by hand (W.data += -50 * W.grad)
    Entry(
        "karpathy_makemore_bigrams",
        "karpathy_makemore_bigrams.py",
        f"{NZH}makemore_part1_bigrams.ipynb",
    ),
    # batch norm by hand (running statistics under no_grad), then hand-made Linear /
    # BatchNorm1d / Tanh layers: retain_grad() on every layer output, torch.histogram of
    # activations and gradients, tensors in %-formats, update-to-data ratios with log10;
    # the gradient statistics of a 1000x1000 product
    Entry(
        "karpathy_makemore_batchnorm",
        "karpathy_makemore_batchnorm.py",
        f"{NZH}makemore_part3_bn.ipynb",
        log_conversions=True,
    ),
    # WaveNet: hand-made layers, FlattenConsecutive's view(B, T // n, C * n) and squeeze,
    # batch norm over dims (0, 1) of a 3-d input, in-place bias add on a non-leaf, eval-mode
    # sampling; rows of a zeros tensor assigned from model outputs
    Entry(
        "karpathy_makemore_wavenet",
        "karpathy_makemore_wavenet.py",
        f"{NZH}makemore_part5_cnn1.ipynb",
    ),
]
# Models from other repositories, each with a small driver of ours where the repository has
# no training script that runs without downloads (the scripts' headers say what is theirs)
CORPUS += [
    # johnma2006/mamba-minimal (Apache-2.0): the pure-PyTorch Mamba (einops rearrange /
    # repeat / einsum, a depthwise causal Conv1d cut to length, softplus step sizes, a
    # selective scan looping over time into torch.stack, RMSNorm with rsqrt, tied
    # embeddings) trained 8 AdamW steps with clip_grad_norm_ on synthetic bytes; then the
    # demo's generate(): topk, a boolean-mask write probs[probs < v[:, -1, None]] = 0,
    # sum(axis=1, keepdims=True), multinomial and argmax sampling, torch.cat of the ids
    # state-spaces/s4 (Apache-2.0): the standalone S4D layer (complex parameters as
    # view_as_real pairs, complex exp and division in the kernel, rfft/irfft convolution)
    # in example.py's S4Model, AdamW with example.py's per-parameter groups, cosine schedule.
    # Found by a held-out trial: its A_imag starts at 0 for the first mode, and the complex
    # division's gradient was NaN there, so every loss after step 0 was NaN.
    # Found by the twenty-ninth session's held-out trial (sources not in the corpus before).
    # lucidrains/lion-pytorch (MIT): Lion, Lion with decoupled weight decay, the cautious
    # variant and the foreach variant (torch._foreach_mul_/add_/sign_/lerp_, which it
    # asserts exist) training a small MLP; our driver.
    Entry(
        "lucidrains_lion",
        "lucidrains_lion/train_lion.py",
        "lucidrains/lion-pytorch lion_pytorch/ (our driver)",
    ),
    # lucidrains/rotary-embedding-torch (MIT): the README's snippets (rotate queries and
    # keys, the kv-cache form, xpos, axial/pixel frequencies) and a one-layer attention
    # trained with learned frequencies and with xpos; our driver.
    Entry(
        "lucidrains_rotary",
        "lucidrains_rotary/readme_rotary.py",
        "lucidrains/rotary-embedding-torch rotary_embedding_torch/ (README + our driver)",
    ),
    # Shawn1993/cnn-text-classification-pytorch (Apache-2.0): main.py unchanged on synthetic
    # MR sentences (per-sample Dataset, a padding collate_fn, sentences of varying length),
    # Kim's CNN with max_pool1d over each map's whole length, Adam, checkpoint save, then
    # -snapshot -predict and -test. Each batch length was a new graph (the global max pool
    # recorded one slice per position) until pooling built tiled windows by reshapes.
    Entry(
        "shawn1993_cnn_text",
        "shawn1993_cnn_text/run_main.py",
        "Shawn1993/cnn-text-classification-pytorch main/model/train/mydatasets.py",
    ),
    Entry(
        "s4_s4d",
        "s4_s4d/train.py",
        "state-spaces/s4 models/s4/s4d.py + example.py (our synthetic-data driver)",
    ),
    Entry(
        "mamba_minimal",
        "mamba_minimal/train.py",
        "johnma2006/mamba-minimal model.py + demo.ipynb's generate (our training driver)",
    ),
    # openai/CLIP (MIT): clip/model.py's CLIP trained with the symmetric contrastive loss
    # (AdamW, the learned temperature clamped in place under no_grad), then rebuilt as
    # clip.load does on the CPU (build_model: float16 weights through .data, eval, then
    # .float()) and run as the README does (encode_image / encode_text, softmax probs through
    # numpy); the text tower is nn.MultiheadAttention with an additive -inf triu_ mask and
    # QuickGELU, features picked at text.argmax(dim=-1) by advanced indexing
    Entry(
        "clip_vit",
        "openai_clip/train.py",
        "openai/CLIP clip/model.py + README usage (our training driver)",
        args="--vision vit",
    ),
    # the ModifiedResNet image tower: three-conv stem, avg-pool anti-aliased Bottlenecks with
    # in-place ReLUs and `out += identity`, an AttentionPool2d through
    # F.multi_head_attention_forward (separate q/k/v weights, out_proj to another width)
    Entry(
        "clip_resnet",
        "openai_clip/train.py",
        "openai/CLIP clip/model.py + README usage (our training driver)",
        args="--vision resnet",
    ),
]
# lucidrains/g-mlp-pytorch (MIT): the enwik8 example on synthetic bytes: a causal gMLP
# (spatial gating units: LayerNorm'd gate halves mixed along the sequence by a per-head
# (n, n) weight masked with triu_(1).bool() through masked_fill, einops rearrange and
# torch.einsum), the AutoregressiveWrapper's cross entropy over transpose(1, 2), gradient
# accumulation, clip_grad_norm_, a validation loss and 8 bytes generated with top-k
# (full_like(-inf) + scatter_) and multinomial
CORPUS += [
    Entry(
        "lucidrains_g_mlp",
        "lucidrains_g_mlp/train.py",
        "lucidrains/g-mlp-pytorch train.py + g_mlp_pytorch/",
    ),
    # the README's usage snippets, outputs printed: circulant spatial weights (F.pad, einops
    # repeat of a padded row, a negative-stop slice and reshape), a Tanh gate, multi-head
    # causal gating, gMLPVision with einops' Rearrange / Reduce layers, aMLP's one-headed
    # attention (chunk, einsum, scale) added to the gate, non-square images and patches
    Entry(
        "lucidrains_g_mlp_readme",
        "lucidrains_g_mlp/readme_usage.py",
        "lucidrains/g-mlp-pytorch README.md usage + g_mlp_pytorch/",
    ),
]
# lucidrains/mlp-mixer-pytorch (MIT): the README's MLPMixer (einops Rearrange patches, token
# mixing by Conv1d(kernel_size=1) over the patch axis, channel mixing by Linear, GELU,
# Reduce('b n c -> b c', 'mean')), a rectangular image and the video MLPMixer3D; outputs
# printed
CORPUS += [
    Entry(
        "lucidrains_mlp_mixer_readme",
        "lucidrains_mlp_mixer/readme_usage.py",
        "lucidrains/mlp-mixer-pytorch README.md usage + mlp_mixer_pytorch/",
    ),
]
# AntixK/PyTorch-VAE (Apache-2.0): models/ unchanged, driven by the run.py-shaped driver in
# scripts/antixk_vae/run.py (Lightning's loop written out: Adam, ExponentialLR, a validation
# pass under no_grad, generate and sample) on synthetic 64x64 images, 6 steps of 8.
# Every one of these trainings is chaotic in float32 (README.md): Adam at the configs' lr 5e-3
# on BatchNorm'd conv stacks with batches of 8. Torch with 1 and with 2 threads drifts apart
# slowly (each entry's comment says how); lazytorch's compiled program parts from torch much
# faster (vanilla: 5.8e-7 at step 0, 2.4e-5 at step 1, 7.5e-4 at step 2), while its step-0
# gradients are as close to the same step in float64 as torch's (3e-6). The likely cause,
# traced in the repository's ConditionalVAE (not an entry, on lazytorch's interpreter): an
# activation within rounding of 0 flips a LeakyReLU mask (one of the last BN's 1M outputs; torch float32 and float64 agree
# on its sign), and that element's gradient alone moves mu's gradient by 5e-3; it was not
# traced in each model. Each entry is compared before lazytorch's drift reaches the rule;
# the vanilla and beta-VAE runs also run in float64 under both libraries
# (test_float64_runs.py), where their losses agree to 1e-13.
VAE = "AntixK/PyTorch-VAE models/ + run.py, experiment.py (our Lightning-free driver)"
CORPUS += [
    # the vanilla VAE: Conv2d / BatchNorm2d / LeakyReLU encoder, ConvTranspose2d
    # (output_padding) decoder, Tanh, reparameterization with randn_like, MSE + KLD; threads:
    # 8.9e-7 at step 3, 3.9e-6 at step 4, 1.1e-4 at step 5
    Entry(
        "antixk_vanilla_vae", "antixk_vae/run.py", VAE, args="-c configs/vae.yaml", chaotic_after=2
    ),
    # beta-VAE (capacity form B): torch.clamp(c, 0, self.C_max.data[0]), a 0-d tensor bound
    # beside a number; threads: 4.6e-7 at step 3, 5.1e-5 at step 5
    Entry(
        "antixk_beta_vae", "antixk_vae/run.py", VAE, args="-c configs/bbvae.yaml", chaotic_after=2
    ),
    # WAE-MMD with the inverse multi-quadratics kernel: unsqueeze / expand pairwise
    # differences, kernel.diag().sum(); threads: 2.3e-6 at step 3. Compared to step 1: in
    # lazytorch's step 0 one final_layer LeakyReLU input, (5, 8, 5, 17), is 1.9e-6 in float64
    # and -7.6e-7 here (the layer's largest float32 error is 1.2e-5 in both libraries), so its
    # mask flips and step 2's loss parts by 1e-3; torch's float32 run keeps that sign by luck.
    # Over 9 other inits of the model (seeds 1-8 and 1265, one batch), torch float32 flipped
    # a mask against float64 in 4, lazytorch in 3; in the 4 where neither did, lazytorch's
    # gradients were the closer to float64's (1.5e-6 to 4.0e-6 against 3.6e-6 to 3.1e-5).
    Entry(
        "antixk_wae_mmd",
        "antixk_vae/run.py",
        VAE,
        args="-c configs/wae_mmd_imq.yaml",
        chaotic_after=2,
    ),
    # InfoVAE: MMD plus a weighted KLD; threads: 8.7e-6 at step 3, 4.8e-5 at step 4
    Entry(
        "antixk_info_vae",
        "antixk_vae/run.py",
        VAE,
        args="-c configs/infovae.yaml",
        chaotic_after=2,
    ),
    # sliced-Wasserstein AE: MSE + F.l1_loss, random projections (randn over its norm), the
    # sorted projections of codes and prior samples (torch.sort(...)[0]); threads: 4.5e-5 at step 4, 3.7e-4 at step 5.
    # Chaotic from step 1: two of the final layer's 1M LeakyReLU inputs lie 3.6e-7 and
    # 1.4e-6 from 0 in float64, and lazytorch's float32 rounding (its C++ sums add in blocks
    # since the twenty-sixth session) puts them on the other side, where the slope is 0.01:
    # the decoder's weight gradients then move by up to 7e-3 (relative) and the step-1 loss
    # is 1.3e-4 off float64's (torch's run, and lazytorch's before, flip none: 7e-7).
    # Same weights, same draws; measured in tests/realworld's harness and op by op.
    Entry("antixk_swae", "antixk_vae/run.py", VAE, args="-c configs/swae.yaml", chaotic_after=1),
    # beta-TC-VAE: importance weights written through strided views (view(-1)[::B] = w),
    # Gaussian log densities over a broadcast (B, B, D) matrix, torch.logsumexp, annealing
    # from a step counter; its loss reaches 3e15 at step 4, where
    # threads differ by 5e-6
    Entry(
        "antixk_betatc_vae",
        "antixk_vae/run.py",
        VAE,
        args="-c configs/betatc_vae.yaml",
        chaotic_after=3,
    ),
    # DIP-VAE: the covariance of centred codes (t().matmul), torch.diagonal(dim1=0) and
    # torch.diag both ways (vector to matrix, matrix to vector); threads: 1.7e-6 at step 2, 1.3e-4 at step 3
    Entry(
        "antixk_dip_vae", "antixk_vae/run.py", VAE, args="-c configs/dip_vae.yaml", chaotic_after=2
    ),
    # categorical VAE: a Gumbel-softmax sample (rand_like, -log(-log(u + eps) + eps),
    # softmax over a temperature that np.maximum / np.exp make a NumPy float64), a KL term of
    # q * log(q + eps) minus q times a NumPy float, summed over dims (1, 2). Threads agree
    # to 7e-7 over five steps, yet its step-0 gradients are rounding-dominated in both
    # libraries: against the same step in float64 (same weights, data and draws) torch
    # float32's encoder and decoder gradients are 1e-3 to 1e-2 off, lazytorch's interpreter's
    # 4e-4 to 4e-3 (not traced further; the conditional VAE's were a flipped LeakyReLU mask);
    # lazytorch's loss parts from torch's by 4e-4 at step 2
    Entry(
        "antixk_cat_vae", "antixk_vae/run.py", VAE, args="-c configs/cat_vae.yaml", chaotic_after=2
    ),
    # VQ-VAE: nearest codebook entries by argmin over expanded distances, a one-hot built with
    # scatter_, the straight-through estimator (x + (q - x).detach()); its loss jumps from
    # 0.35 to 1.2e5 at step 1, where threads already differ by 4.4e-4
    Entry(
        "antixk_vq_vae", "antixk_vae/run.py", VAE, args="-c configs/vq_vae.yaml", chaotic_after=1
    ),
]
# Further repositories, each a script run as written below its header (MIT)
CORPUS += [
    # hkproj/pytorch-llama: LLaMA-2 inference in bfloat16 (torch.set_default_tensor_type(
    # torch.BFloat16Tensor)): RMSNorm, rotary embeddings as complex numbers (torch.polar,
    # view_as_complex, view_as_real), grouped-query attention with a KV cache written in place
    # per position, SwiGLU; top-p sampling (sort, cumsum, a mask written with 0.0, div_,
    # multinomial, gather), torch.where over the prompt mask
    Entry(
        "hkproj_llama",
        "hkproj_llama/inference.py",
        "hkproj/pytorch-llama inference.py + model.py",
    ),
    # the same in float32 (torch.FloatTensor as the default tensor type)
    Entry(
        "hkproj_llama_f32",
        "hkproj_llama/inference_f32.py",
        "hkproj/pytorch-llama inference.py + model.py",
    ),
    # TeaPearce/Conditional_Diffusion_MNIST: a class-conditional DDPM: a small U-Net (residual
    # Conv2d / BatchNorm2d / GELU blocks, MaxPool2d, AvgPool2d(7) to a vector, ConvTranspose2d
    # and GroupNorm on the way up, skip concatenations), MLP embeddings of the time step and of
    # a one-hot label masked by torch.bernoulli, a noise schedule from cumsum(log).exp(), Adam
    # with its lr set in param_groups, a DataLoader with 5 worker processes; then classifier-
    # free guided sampling at three strengths (the batch doubled with repeat, half its context
    # masked), real images picked per class through (c == k).nonzero() under a bare try/except,
    # written into torch.Tensor(shape) row by row. Samples compared through their absolute sums
    # (a line the header lists)
    Entry(
        "teapearce_cond_diffusion",
        "teapearce_cond_diffusion/script.py",
        "TeaPearce/Conditional_Diffusion_MNIST script.py",
    ),
    # sthalles/SimCLR: contrastive pretraining of a ResNet-18 with an MLP head: two augmented
    # views per image (a Gaussian blur run as two grouped Conv2d layers after ReflectionPad2d,
    # weights written through .data.copy_, the image round-tripped through mul(255).byte()),
    # the InfoNCE loss built from a similarity matrix with boolean-mask indexing (~eye, labels
    # .bool()) and view(n, -1), GradScaler / autocast (disabled on the CPU), Adam with weight
    # decay, CosineAnnealingLR, top-k accuracy (topk, t(), eq of expand_as), SummaryWriter
    # scalars, the args dumped with yaml, a checkpoint of both state_dicts. Run with -j 0:
    # the DataLoader loads in-process
    Entry(
        "sthalles_simclr",
        "sthalles_simclr/run.py",
        "sthalles/SimCLR run.py + simclr.py + utils.py + models/ + data_aug/ + exceptions/",
        args="-dataset-name cifar10 -j 0 --epochs 1 -b 8 --log-every-n-steps 1",
        # Chaotic in float32 (README.md): Adam's first update moves each weight by about
        # lr * sign(grad), so weights whose gradients lie within rounding of 0 move either
        # way. Torch with 1 and with 2 threads differs by 7.6e-8, 8.7e-6 and 2.4e-3 at steps 0
        # to 2; lazytorch parts from torch by 1.3e-6, 1.3e-4 and 3.1e-3. Against the same
        # steps in float64 (same weights, one fixed batch): both libraries' step-0 gradients
        # are within 1.5e-5 of float64's and their weights after the first update 1.3e-2 off
        # in the worst tensor; the step-1 loss is 5.9e-6 off in torch, 7.3e-5 in lazytorch,
        # and step 2's 6.7e-4 and 2.2e-3. Compared at step 0.
        chaotic_after=1,
    ),
    # tonyduan/mixture-density-network: a mixture density network (log_softmax mixture
    # weights, exp'd scales, an einsum of z-scores, logsumexp over components), Adam with
    # CosineAnnealingLR, losses formatted from loss.data; samples drawn by torch.searchsorted
    # over cumsum'd weights and take_along_dim. 60 iterations: in the script's 2000 (150
    # measured) the loss spikes at step 58 (-1.01, -0.90, -0.55), where the difference between
    # the two runs jumps from 4e-5 to 2e-2, and the sampled sum then differs by 1e-3
    Entry(
        "tonyduan_mdn",
        "tonyduan_mdn/ex_1d.py",
        "tonyduan/mixture-density-network examples/ex_1d.py + src/blocks.py",
        args="--n-iterations 60",
    ),
    # dragen1860/MAML-Pytorch: model-agnostic meta-learning on synthetic Omniglot episodes: a
    # functional conv/BN net whose weights are passed in as a list (F.conv2d, F.batch_norm
    # with training=True on running buffers it owns), inner SGD steps built from
    # autograd.grad of a non-leaf list of fast weights, the meta loss backpropagated through
    # all of them (second order), Adam on the outer loop; then fine-tuning on deep copies
    # with torch.no_grad, accuracies from softmax(...).argmax. 5-shot: with the script's
    # default 1-shot each batch norm normalizes over 5 images, and step 0 alone is chaotic
    # in float32 (three inner steps at lr 0.4): scaling the input by 1 +- 1e-7, torch's own
    # query loss moves from 4.7e-4 to 3.6e-3 off float64's (lazytorch's, 2.4e-4 to 1.9e-3).
    # 5-shot is chaotic from step 1 (measured on the same net and one fixed episode): one
    # nearly dead channel of the first conv switches its ReLU pattern between fast weights
    # 1e-7 apart, and its bias gradient in the second inner step jumps between -0.0038 and
    # -0.0081. torch in float32 and in float64, given lazytorch's fast weights, computes
    # lazytorch's -0.0038; the meta gradient then differs by 1.8 (relative) in that bias,
    # and Adam's first update moves every weight by about lr * sign(grad). Step 0 agrees to
    # 7.3e-6 (allowed 1e-4; scaling the input by 1 +- 1e-7 moves torch's own query loss by
    # up to 3.4e-5 against float64's); compared at step 0.
    Entry(
        "dragen1860_maml",
        "dragen1860_maml/omniglot_train.py",
        "dragen1860/MAML-Pytorch omniglot_train.py + meta.py + learner.py + omniglotNShot.py",
        args="--k_spt 5",
        chaotic_after=1,
    ),
]
# tonyduan/normalizing-flows (MIT): examples/ex_2d.py, one entry per flow: a 2-d density with
# a MultivariateNormal prior (log_prob, sample), the flow class picked with eval(args.flow),
# data standardized column by column (x[:, i] = ...), log-determinants summed over the stack,
# Adam; then 500 samples through the inverses, and the data through each flow
FL = "tonyduan/normalizing-flows examples/ex_2d.py + src/flows.py, models.py, utils.py"
CORPUS += [
    # masked autoregressive flow: each dimension's shift and log-scale from an MLP of the
    # previous ones (the first from a Parameter), written column by column into
    # torch.zeros_like(x), flip(dims=(1,)); the inverse in the same order
    Entry("tonyduan_flows_maf", "tonyduan_flows/ex_2d.py", FL, args="--flow MAF --iterations 60"),
    # RealNVP: two affine couplings over the halves x[:, :d // 2] and x[:, d // 2:], shift
    # and log-scale MLPs, torch.cat, log-determinants as sums of the log-scales
    Entry(
        "tonyduan_flows_realnvp",
        "tonyduan_flows/ex_2d.py",
        FL,
        args="--flow RealNVP --iterations 60",
    ),
    # neural spline flow, coupling form: unconstrained rational-quadratic splines (torch.split
    # of an MLP's output into widths, heights and derivatives, softmax, softplus, knots from
    # cumsum and F.pad, bin indices as a sum of comparisons, gather, results written through
    # boolean masks with identity tails outside [-B, B], the inverse a root of a quadratic).
    # 25 iterations: at 60 the losses part by 8e-5 from step 50 and the samples by 2e-4
    # (not traced; MAF's and RealNVP's 60 agree to 3e-7)
    Entry(
        "tonyduan_flows_nsf_cl",
        "tonyduan_flows/ex_2d.py",
        FL,
        args="--flow NSF_CL --iterations 25",
    ),
]
# nikhilbarhate99/PPO-PyTorch (MIT): train.py's PPO with a toy environment (the header of
# scripts/ppo_pytorch/gym.py): actor and critic MLPs under one Adam with two parameter groups,
# a rollout buffer of tensors stacked and squeezed at each update, Monte-Carlo returns
# normalized by hand, K epochs of the clipped surrogate (torch.min, torch.clamp) plus an MSE
# value loss and an entropy bonus, policy_old refreshed with load_state_dict, a checkpoint
PPO_SRC = "nikhilbarhate99/PPO-PyTorch train.py + PPO.py"
CORPUS += [
    # continuous actions: MultivariateNormal with a diagonal covariance (torch.diag of the
    # variances when acting, diag_embed of expand_as when evaluating), log_prob, entropy, the
    # action std decayed mid-run
    Entry("ppo_continuous", "ppo_pytorch/train.py", PPO_SRC),
    # discrete actions: Categorical over a softmax, sample().item() per step
    Entry("ppo_discrete", "ppo_pytorch/train_discrete.py", PPO_SRC),
]
CORPUS += [
    # vgsatorras/egnn (MIT): the E(n)-equivariant GNN with velocities on (synthetic) n-body
    # trajectories: edge messages from node pairs indexed by edge lists and squared coordinate
    # differences, coordinate updates aggregated by unsorted_segment_sum / mean (new_full,
    # scatter_add_, count.clamp), translations clamped, velocities scaled by an MLP of the node
    # features; Adam with weight decay, MSE on the predicted positions, a validation and test
    # pass, results written with json
    Entry(
        "egnn_nbody",
        "egnn_nbody/main_nbody.py",
        "vgsatorras/egnn main_nbody.py + n_body_system/ + models/gcl.py",
        args="--epochs 3 --nf 32",
    ),
]
# rasbt/machine-learning-book (MIT): the book's chapter scripts
MLB = "rasbt/machine-learning-book "
CORPUS += [
    # ch13 part 1: compute graphs of 0-d to rank-2 tensors, requires_grad_, xavier_normal_,
    # autograd of a one-neuron loss, MLPs on XOR data (nn.Sequential, then a Module with its
    # own predict()) with a TensorDataset, SGD, nn.BCELoss, accuracy through
    # ((pred >= 0.5).float() == y).float(); a custom NoisyLinear layer adding torch.normal
    # noise in training only
    Entry("mlbook_ch13_part1", "mlbook_ch13_part1.py", f"{MLB}ch13/ch13_part1.py"),
    # ch15 part 2: sentiment RNN on (synthetic) IMDB reviews: a regex tokenizer, a Counter /
    # OrderedDict vocabulary, collate_fn with pad_sequence, an Embedding(padding_idx=0) and
    # an LSTM over pack_padded_sequence(enforce_sorted=False), then a bidirectional LSTM
    # whose last hidden states are torch.cat'ed; BCELoss, Adam
    Entry("mlbook_ch15_part2", "mlbook_ch15_part2.py", f"{MLB}ch15/ch15_part2.py"),
    # ch15 part 3: a character-level LSTM language model: np.array text encoding, chunks in
    # a Dataset, an Embedding / LSTM / Linear with hidden and cell states passed by hand per
    # character, CrossEntropyLoss, Adam; text generated by Categorical(logits=...).sample()
    # at scale factors 1, 2 and 0.5
    Entry("mlbook_ch15_part3", "mlbook_ch15_part3.py", f"{MLB}ch15/ch15_part3.py"),
    # ch17 part 2: a DCGAN (ConvTranspose2d / BatchNorm2d / LeakyReLU generator and
    # discriminator, BCELoss, two Adams), then a WGAN-GP with InstanceNorm2d in the critic: a
    # gradient penalty from torch.autograd.grad(create_graph=True) on interpolated images
    # (torch.rand(...) weights) and its norm, backward through the penalty
    Entry("mlbook_ch17_part2", "mlbook_ch17_part2.py", f"{MLB}ch17/ch17_part2.py"),
]
CORPUS += [
    # rasbt/deeplearning-models (MIT): Network-in-Network on (synthetic) CIFAR-10 trained twice,
    # plainly and with torch.utils.checkpoint.checkpoint_sequential over the classifier
    # (segments=1), each under tracemalloc; helper_train's loop with per-epoch accuracies and
    # losses read through item(), train / validation splits by SubsetRandomSampler, loaders
    # with 2 worker processes
    Entry(
        "rasbt_nin_checkpointing",
        "rasbt_nin_checkpointing/main.py",
        "rasbt/deeplearning-models pytorch_ipynb/mechanics/gradient-checkpointing-nin.ipynb + helper_*.py",
        log_conversions=True,
    ),
    # bentrevett/pytorch-image-classification (MIT): AlexNet on (synthetic) CIFAR-10:
    # normalization constants from the data's NumPy mean and std, random_split and a
    # deepcopy'd validation set given its own transform, an LR range test (a _LRScheduler
    # subclass, an iterator wrapper, the initial weights saved and loaded back), Adam,
    # argmax accuracy, the best model saved and reloaded, predictions gathered with torch.cat,
    # imagine_image's torch.max over softmaxed random images
    Entry(
        "bentrevett_alexnet",
        "bentrevett_alexnet.py",
        "bentrevett/pytorch-image-classification 3_alexnet.ipynb",
        # Chaotic in float32 (README.md): after the range test (losses 0 to 4, the weights then
        # reloaded) Adam at lr 1e-3 drives AlexNet's loss from 2.3 to 9.4 within four steps.
        # Torch with 1 and with 2 threads differs by 1.4e-6 at loss 7, 9e-6 at loss 8 and
        # 3.5e-3 at loss 9. With im2col convolutions lazytorch parted from torch by 3.0e-5 at
        # loss 7; with the direct convolution kernels its compiled program parts by 4e-7 at
        # loss 6 and 1.5e-3 at loss 7 (the interpreter tier: 2.7e-6 at loss 7, so a default
        # run's figure depends on which steps the tier ran). On this model's five layer shapes
        # (batch 32, random inputs, ReLU'd or not) the kernels' errors against float64 are
        # torch's or smaller: outputs and input gradients 1.5e-7 to 4.6e-7 (torch 2.1e-7 to
        # 4.0e-7), weight gradients 1.5e-7 to 2.3e-7 (torch 5.4e-7 to 1.4e-6). Compared up to
        # loss 6 (and the first 7 items and prints).
        chaotic_after=7,
    ),
]
BY_NAME = {e.name: e for e in CORPUS}


# -- the tolerance rule (README.md, "When two runs match") ------------------------------
EARLY_STEPS = 5
RTOL = {
    "float32": (1e-4, 1e-3, 1e-2),  # steps < 5, steps < 50, later
    "float64": (1e-9, 1e-7, 1e-5),
}


def allowed(step: int, torch_value: float, scale: float, dtype: str) -> float:
    """The largest |torch - lazytorch| accepted at `step` (0-based)."""
    early, middle, late = RTOL[dtype]
    rtol = early if step < EARLY_STEPS else middle if step < 50 else late
    # an absolute floor at the run's own magnitude: a loss that trains to ~0 is compared
    # against its scale, not against the rounding of a tiny number
    return rtol * (abs(torch_value) + 1e-3 * scale)


def compare_values(
    ours: list[Any], theirs: list[Any], dtype: str, upto: int | None = None
) -> str | None:
    """None when `theirs` (lazytorch) matches `ours` (torch) step by step (the first `upto`
    steps when given), else the first difference."""
    if len(ours) != len(theirs):
        return f"torch logged {len(ours)} values, lazytorch {len(theirs)}"
    if upto is not None:
        ours, theirs = ours[:upto], theirs[:upto]
    floats = [abs(float(v)) for v in ours if isinstance(v, float) and math.isfinite(v)]
    scale = max(floats, default=1.0)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if isinstance(a, bool) or (isinstance(a, int) and isinstance(b, int)):
            if a != b:
                return f"step {i}: torch {a}, lazytorch {b} (integers compare exactly)"
            continue
        a, b = float(a), float(b)
        if math.isnan(a) and math.isnan(b):
            continue
        tol = allowed(i, a, scale, dtype)
        if not abs(a - b) <= tol:
            return f"step {i}: torch {a}, lazytorch {b} (allowed difference {tol:.3g})"
    return None


# A printed value has no scale of its own to compare against: ``print(torch.dist(X.T @ X,
# eye))`` prints rounding noise (1e-7 in one library, 6e-8 in the other). Differences below
# these are accepted whatever the value (torch prints four significant digits).
PRINT_ATOL = {"float32": 1e-5, "float64": 1e-9}


def compare_printed(
    ours: list[list[Any]], theirs: list[list[Any]], dtype: str, upto: int | None = None
) -> str | None:
    """None when the tensors lazytorch's run printed (`theirs`) hold torch's values (`ours`),
    print by print, each print's elements under the tolerance of its index as a step (the
    first `upto` prints when given), else the first difference.

    >>> compare_printed([[1.0, 2.0], [True]], [[1.0, 2.00001], [True]], "float32")
    >>> compare_printed([[1.0, 2.0]], [[1.0, 2.5]], "float32")
    'print 0, element 1: torch 2.0, lazytorch 2.5 (allowed difference 0.0002)'
    >>> compare_printed([[1.4e-07]], [[6.2e-08]], "float32")  # noise around 0: PRINT_ATOL
    >>> compare_printed([[1.0]], [[1.0, 2.0]], "float32")
    'print 0: torch printed 1 values, lazytorch 2'
    """
    if len(ours) != len(theirs):
        return f"torch printed {len(ours)} tensors, lazytorch {len(theirs)}"
    pairs = list(zip(ours, theirs))[:upto] if upto is not None else zip(ours, theirs)
    for i, (a, b) in enumerate(pairs):
        if len(a) != len(b):
            return f"print {i}: torch printed {len(a)} values, lazytorch {len(b)}"
        floats = [abs(float(v)) for v in a if isinstance(v, float) and math.isfinite(v)]
        scale = max(floats, default=1.0)
        for j, (x, y) in enumerate(zip(a, b)):
            if isinstance(x, bool) or (isinstance(x, int) and isinstance(y, int)):
                if x != y:
                    return f"print {i}, element {j}: torch {x}, lazytorch {y}"
                continue
            x, y = float(x), float(y)
            if (math.isnan(x) and math.isnan(y)) or x == y:  # equal infinities too
                continue
            tol = max(allowed(i, x, scale, dtype), PRINT_ATOL[dtype])
            if not abs(x - y) <= tol:
                return f"print {i}, element {j}: torch {x}, lazytorch {y} (allowed difference {tol:.3g})"
    return None


@dataclass
class PairResult:
    entry: Entry
    torch: dict[str, Any]
    lazy: dict[str, Any]
    loss_mismatch: str | None
    item_mismatch: str | None
    printed_mismatch: str | None = None

    @property
    def runs(self) -> bool:
        return bool(self.lazy.get("ok"))

    @property
    def matches(self) -> bool:
        return (
            self.runs
            and self.loss_mismatch is None
            and self.item_mismatch is None
            and self.printed_mismatch is None
        )


def step_times(run: dict[str, Any]) -> tuple[float | None, float | None]:
    """(first step, median of the steps after the first three) in seconds; steps are the
    intervals between successive ``backward`` calls."""
    stamps = run.get("step_stamps") or []
    d = [b - a for a, b in itertools.pairwise(stamps)]
    if not d:
        return None, None
    rest = d[3:] if len(d) > 4 else d[1:] or d
    return d[0], statistics.median(rest)


def run_one(entry: Entry, lib: str, tape: str, out: str, env: dict[str, str]) -> dict[str, Any]:
    cmd = [sys.executable, str(HERE / "harness.py"), "--lib", lib, "--tape", tape, "--out", out]
    cmd += [str(SCRIPTS / entry.script), *entry.args.split()]
    conversions = {"REALWORLD_LOG_CONVERSIONS": "1"} if entry.log_conversions else {}
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        # set iteration order (a vocabulary built from set(words)) alike in both runs
        env={**os.environ, "PYTHONHASHSEED": "0", **conversions, **env},
        timeout=1800,
    )
    if not os.path.exists(out):
        return {
            "lib": lib,
            "ok": False,
            "error": f"harness crashed (exit {proc.returncode})",
            "traceback": proc.stderr[-4000:],
        }
    with open(out) as f:
        result: dict[str, Any] = json.load(f)
    result["stdout_tail"] = proc.stdout[-2000:]
    return result


def run_pair(entry: Entry, env: dict[str, str] | None = None) -> PairResult:
    """Run `entry` under torch, then under lazytorch with torch's draws (`env` adds
    environment variables to the lazytorch run: LAZYTORCH_SYNC, LAZYTORCH_BACKEND)."""
    with tempfile.TemporaryDirectory() as tmp:
        tape = os.path.join(tmp, "tape.pkl")
        ref = run_one(entry, "torch", tape, os.path.join(tmp, "torch.json"), {})
        if not ref["ok"]:
            raise RuntimeError(
                f"{entry.name} fails under torch: {ref['error']}\n{ref.get('traceback')}"
            )
        lazy = run_one(entry, "lazytorch", tape, os.path.join(tmp, "lazy.json"), env or {})
    loss_mismatch = item_mismatch = printed_mismatch = None
    if lazy.get("ok"):
        printed_mismatch = compare_printed(
            ref["printed"], lazy["printed"], entry.dtype, entry.chaotic_after
        )
        loss_mismatch = compare_values(
            ref["losses"], lazy["losses"], entry.dtype, entry.chaotic_after
        )
        item_mismatch = compare_values(
            ref["items"], lazy["items"], entry.dtype, entry.chaotic_after
        )
    return PairResult(entry, ref, lazy, loss_mismatch, item_mismatch, printed_mismatch)
