"""A stand-in for gym's ``CartPole-v1`` (gym is not installed here), for the minimalRL scripts.

A copy of ``../reinforcement_learning/_cartpole.py`` with two differences: the
environment's generator is seeded with 0 (minimalRL calls ``env.reset()`` without a seed,
and gym seeds from the OS, so the torch and lazytorch runs would see different episodes),
and it has gym's ``close()``.

The dynamics, termination, reward, reset distribution and 500-step time limit of
gymnasium's ``gymnasium/envs/classic_control/cartpole.py`` (Euler integration), written
out in NumPy; ``make`` returns it the way ``gym.make('CartPole-v1')`` returns the wrapped
environment (``reset(seed=...)``, ``step(action)`` with gymnasium's five results,
``spec.reward_threshold``). Not a copy of gymnasium's code: the equations of the
classic cart-pole problem (Barto, Sutton and Anderson, 1983) with its constants.
"""

import math
from types import SimpleNamespace

import numpy as np


class CartPoleEnv:
    gravity = 9.8
    masscart = 1.0
    masspole = 0.1
    total_mass = masspole + masscart
    length = 0.5  # half the pole's length
    polemass_length = masspole * length
    force_mag = 10.0
    tau = 0.02  # seconds between state updates
    theta_threshold_radians = 12 * 2 * math.pi / 360
    x_threshold = 2.4
    max_episode_steps = 500

    def __init__(self):
        self.spec = SimpleNamespace(id="CartPole-v1", reward_threshold=475.0)
        self.np_random = np.random.default_rng(0)
        self.state = None
        self.steps = 0

    def reset(self, seed=None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.state = self.np_random.uniform(low=-0.05, high=0.05, size=(4,))
        self.steps = 0
        return np.array(self.state, dtype=np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        costheta, sintheta = math.cos(theta), math.sin(theta)
        temp = (force + self.polemass_length * theta_dot**2 * sintheta) / self.total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta**2 / self.total_mass)
        )
        xacc = temp - self.polemass_length * thetaacc * costheta / self.total_mass
        x = x + self.tau * x_dot
        x_dot = x_dot + self.tau * xacc
        theta = theta + self.tau * theta_dot
        theta_dot = theta_dot + self.tau * thetaacc
        self.state = np.array((x, x_dot, theta, theta_dot), dtype=np.float64)
        self.steps += 1
        terminated = bool(
            x < -self.x_threshold
            or x > self.x_threshold
            or theta < -self.theta_threshold_radians
            or theta > self.theta_threshold_radians
        )
        truncated = self.steps >= self.max_episode_steps
        return np.array(self.state, dtype=np.float32), 1.0, terminated, truncated, {}

    def render(self):
        pass

    def close(self):
        pass


def make(env_id, render_mode=None):
    assert env_id == "CartPole-v1", env_id
    return CartPoleEnv()
