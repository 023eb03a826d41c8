"""Shrunk failures saved by the fuzzing campaign (``python -m tests.fuzz``): each file
replays one exact program or training case against torch."""
