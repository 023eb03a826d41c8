"""A stand-in for the old gym API (gym 0.8 to 0.25) over ``_cartpole.CartPoleEnv``.

MorvanZhou's DQN tutorial was written against ``gym.make('CartPole-v0').unwrapped``:
``reset()`` returns the observation alone, ``step(action)`` returns four results
(``obs, reward, done, info``), ``action_space.n``/``sample()`` and
``observation_space.shape`` describe the spaces. ``unwrapped`` drops the time limit, as
gym's did. The environment's generator is seeded with 0 (gym seeded it from the OS unless
``env.seed()`` was called) so that the torch and lazytorch runs see the same episodes.
"""

from types import SimpleNamespace

import numpy as np

from _cartpole import CartPoleEnv


class _Discrete:
    def __init__(self, n, rng):
        self.n = n
        self._rng = rng

    def sample(self):
        return int(self._rng.integers(self.n))


class CartPoleV0(CartPoleEnv):
    def __init__(self, max_episode_steps):
        super().__init__()
        self.np_random = np.random.default_rng(0)
        self.max_episode_steps = max_episode_steps
        self.action_space = _Discrete(2, np.random.default_rng(1))
        self.observation_space = SimpleNamespace(shape=(4,))
        self.spec = SimpleNamespace(id="CartPole-v0", reward_threshold=195.0)

    @property
    def unwrapped(self):
        env = CartPoleV0(max_episode_steps=float("inf"))
        env.np_random = self.np_random
        return env

    def reset(self):
        obs, _ = super().reset()
        return obs

    def step(self, action):
        obs, reward, terminated, truncated, _ = super().step(action)
        return obs, reward, terminated or truncated, {}


def make(env_id):
    assert env_id == "CartPole-v0", env_id
    return CartPoleV0(max_episode_steps=200)
