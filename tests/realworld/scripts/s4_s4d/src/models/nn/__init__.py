from .dropout import DropoutNd  # (the package's other modules are not needed by s4d.py)
