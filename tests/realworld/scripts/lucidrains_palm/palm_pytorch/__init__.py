from palm_pytorch.palm_pytorch import PaLM
