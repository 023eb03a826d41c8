# A stand-in for gym (not installed here), ours: gym.make returns a toy environment with the
# old gym API train.py uses (reset() -> state, step(action) -> (state, reward, done, info),
# observation_space.shape, action_space.shape or .n, seed, close), drawn from NumPy's
# generator: the state evolves as tanh(W s) plus noise, the reward is minus the distance of
# the action from the state's first coordinates, and an episode ends after 30 to 49 steps.
# "RoboschoolWalker2d-v1" (train.py) has an 8-d state and a 2-d continuous action (Walker2d's
# are 22-d and 6-d); "CartPole-v1" (train_discrete.py) a 4-d state and 2 discrete actions,
# as CartPole's.
import numpy as np


class _Box:
    def __init__(self, shape):
        self.shape = shape


class _Discrete:
    def __init__(self, n):
        self.n = n


class _ToyEnv:
    def __init__(self, obs_dim, action_space):
        self.observation_space = _Box((obs_dim,))
        self.action_space = action_space
        self.W = np.random.randn(obs_dim, obs_dim) * 0.3

    def reset(self):
        self.t = 0
        self.s = np.random.randn(self.observation_space.shape[0])
        return self.s

    def step(self, action):
        self.t += 1
        a = np.asarray(action, dtype=np.float64).ravel()
        self.s = np.tanh(self.W @ self.s) + 0.1 * np.random.randn(self.s.shape[0])
        if a.shape[0] > 1:
            reward = float(-np.sum((self.s[: a.shape[0]] - a) ** 2))
        else:
            reward = float(-abs(self.s[0] - a[0]))
        done = self.t >= 30 + int(np.random.randint(0, 20))
        return self.s, reward, done, {}

    def seed(self, s):
        pass

    def close(self):
        pass


def make(name):
    if name == "CartPole-v1":
        return _ToyEnv(4, _Discrete(2))
    return _ToyEnv(8, _Box((2,)))
