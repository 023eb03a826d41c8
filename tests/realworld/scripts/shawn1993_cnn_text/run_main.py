# Source: https://github.com/Shawn1993/cnn-text-classification-pytorch (commit 93415f08168a1ae60635320569f6eca0ae3a40bb)
# Licence: Apache-2.0 (LICENSE copied to this folder; its appendix names no copyright holder,
# the repository is Shawn1993's). main.py, model.py, train.py, mydatasets.py are unchanged.
# This wrapper is ours: the MR dataset download (rt-polaritydata.tar.gz) is replaced by
# synthetic sentences written where main.py looks for them (./rt-polaritydata/), 200
# negative and 200 positive lines drawn from a 300-word vocabulary with class-dependent word
# frequencies; then main.py runs training (sizes on its command line), and again with
# -snapshot (the best checkpoint it saved) and -predict, and once more with -test.
import glob, os, runpy, sys
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(0)
os.makedirs("rt-polaritydata", exist_ok=True)
words = ["w%d" % i for i in range(300)]
for name, lo in (("neg", 0), ("pos", 100)):
    with open("rt-polaritydata/rt-polarity.%s" % name, "w") as f:
        for _ in range(200):
            n = rng.randint(6, 20)
            ids = np.concatenate([rng.randint(lo, lo + 200, n // 2), rng.randint(0, 300, n - n // 2)])
            f.write(" ".join(words[i] for i in ids) + " .\n")

def main(*args):
    sys.argv = [os.path.join(here, "main.py"), *args]
    runpy.run_path(sys.argv[0], run_name="__main__")

sizes = ["-epochs", "2", "-batch-size", "32", "-embed-dim", "16", "-kernel-num", "8",
         "-test-interval", "5", "-save-interval", "7", "-save-dir", "snap"]
main(*sizes, *sys.argv[1:])
best = max(glob.glob("snap/*/best_steps_*.pt"), key=os.path.getmtime)
main(*sizes, "-snapshot", best, "-predict", "w3 w5 w150 w7 w220 .")
main(*sizes, "-snapshot", best, "-test")
