"""A stand-in for gym's ``Pendulum-v1`` (gym is not installed here), for the minimalRL scripts.

The dynamics, cost, observation, reset distribution and 200-step time limit of gym's
``gym/envs/classic_control/pendulum.py`` (MIT, Copyright (c) 2016 OpenAI (https://openai.com)), written out in
NumPy; ``make`` returns it the way ``gym.make('Pendulum-v1')`` returns the wrapped
environment (``reset()`` -> ``(obs, info)``, ``step(action)`` with gym's five results).
The generator is seeded with 0 (gym seeds from the OS unless asked) so that the torch and
lazytorch runs see the same episodes. ``autoreset`` is accepted; the minimalRL scripts
reset after each 200-step episode themselves, so it is not acted on.
"""

import numpy as np


def angle_normalize(x):
    return ((x + np.pi) % (2 * np.pi)) - np.pi


class PendulumEnv:
    max_speed = 8.0
    max_torque = 2.0
    dt = 0.05
    g = 10.0
    m = 1.0
    l = 1.0

    def __init__(self, max_episode_steps=200):
        self.np_random = np.random.default_rng(0)
        self.max_episode_steps = max_episode_steps
        self.state = None
        self.steps = 0

    def reset(self, seed=None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        high = np.array([np.pi, 1.0])
        self.state = self.np_random.uniform(low=-high, high=high)
        self.steps = 0
        return self._get_obs(), {}

    def step(self, u):
        th, thdot = self.state
        u = np.clip(u, -self.max_torque, self.max_torque)[0]
        costs = angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * (u**2)
        newthdot = thdot + (3 * self.g / (2 * self.l) * np.sin(th) + 3.0 / (self.m * self.l**2) * u) * self.dt
        newthdot = np.clip(newthdot, -self.max_speed, self.max_speed)
        newth = th + newthdot * self.dt
        self.state = np.array([newth, newthdot])
        self.steps += 1
        truncated = self.steps >= self.max_episode_steps
        return self._get_obs(), -costs, False, truncated, {}

    def _get_obs(self):
        theta, thetadot = self.state
        return np.array([np.cos(theta), np.sin(theta), thetadot], dtype=np.float32)

    def render(self):
        pass

    def close(self):
        pass


def make(env_id, max_episode_steps=200, autoreset=False, render_mode=None):
    assert env_id == "Pendulum-v1", env_id
    return PendulumEnv(max_episode_steps)
