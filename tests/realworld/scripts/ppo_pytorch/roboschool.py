# A stand-in for roboschool (not installed here): train.py imports it for its environments' registration with gym; gym.py needs none.
