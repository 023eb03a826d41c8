"""`SummaryWriter` and `FileWriter`: torch.utils.tensorboard's writers, same files.

Events go through TensorBoard's ``EventFileWriter`` (a queue flushed every ``flush_secs``
or when ``max_queue`` events wait, and on `flush` / `close`), in the directory layout
torch's writer uses: ``runs/<date>_<host><comment>`` by default, one sub-directory
``<log_dir>/<main_tag>_<tag>`` per series of `SummaryWriter.add_scalars`, and one
``<log_dir>/<run_name>`` per `SummaryWriter.add_hparams` call.
"""

from __future__ import annotations

import io
import os
import socket
import time
import warnings
from datetime import datetime
from typing import Any

import numpy as np
from google.protobuf import text_format
from tensorboard.compat import tf
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo, ProjectorConfig
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from lazytorch.utils.tensorboard import summary as _summary
from lazytorch.utils.tensorboard.summary import make_grid, make_np

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes ``Event`` protos to one event file in ``log_dir`` (TensorBoard's writer)."""

    def __init__(
        self, log_dir: Any, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""
    ) -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        """The directory the event file is in."""
        return self.event_writer.get_logdir()

    def add_event(
        self, event: Event, step: int | None = None, walltime: float | None = None
    ) -> None:
        """Queue ``event``, stamped with ``walltime`` (now by default) and ``step``."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(
        self, summary: Any, global_step: int | None = None, walltime: float | None = None
    ) -> None:
        """Queue a ``Summary`` proto as an event."""
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile: Any, walltime: float | None = None) -> None:
        """Not available: lazytorch builds no TensorBoard ``GraphDef`` (see `SummaryWriter.add_graph`)."""
        raise NotImplementedError(
            "FileWriter.add_graph: lazytorch has no torch.jit trace to build a TensorBoard "
            "GraphDef from; SummaryWriter.add_graph logs nothing (with a warning)"
        )

    def add_onnx_graph(self, graph: Any, walltime: float | None = None) -> None:
        """Queue an already-built ``GraphDef`` (``graph``) as a graph event."""
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)

    def flush(self) -> None:
        """Write the queued events to disk."""
        self.event_writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self.event_writer.close()

    def reopen(self) -> None:
        """After `close`, write further events to a new event file in the same directory."""
        self.event_writer.reopen()


def _default_bins() -> list[float]:
    # torch's "tensorflow" buckets: +-1e-12 * 1.1**k up to 1e20, and 0
    v = 1e-12
    buckets = []
    neg_buckets = []
    while v < 1e20:
        buckets.append(v)
        neg_buckets.append(-v)
        v *= 1.1
    return [*neg_buckets[::-1], 0, *buckets]


class SummaryWriter:
    """Writes TensorBoard event files, as ``torch.utils.tensorboard.SummaryWriter``.

    Values may be lazytorch tensors (read at the call, which materializes them), NumPy
    arrays or Python numbers. ``add_graph`` logs nothing and warns (lazytorch has no
    ``torch.jit.trace``); ``add_video``, ``add_mesh``, ``add_image_with_boxes`` and
    ``add_onnx_graph`` raise NotImplementedError.

    >>> import tempfile
    >>> with SummaryWriter(tempfile.mkdtemp()) as w:  # doctest: +SKIP
    ...     for step in range(3):
    ...         w.add_scalar("loss", 1.0 / (step + 1), step)
    """

    def __init__(
        self,
        log_dir: Any = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self) -> FileWriter:
        """The default FileWriter, made anew after `close`."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START))
                )
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory event files are written to."""
        return self.log_dir

    def add_hparams(
        self,
        hparam_dict: dict[str, Any],
        metric_dict: dict[str, Any],
        hparam_domain_discrete: dict[str, list[Any]] | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """Log hyperparameters and their metrics in ``<log_dir>/<run_name>`` (a timestamp
        by default); each metric is also logged there as a scalar."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            fw = w_hp._get_file_writer()
            fw.add_summary(exp, global_step)
            fw.add_summary(ssi, global_step)
            fw.add_summary(sei, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Log one scalar (a number, or a one-element tensor or array) under ``tag``."""
        summary = _summary.scalar(
            tag, scalar_value, new_style=new_style, double_precision=double_precision
        )
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log several scalars on one chart: each in its own run directory
        ``<log_dir>/<main_tag>_<tag>``, under the tag ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        assert self.all_writers is not None
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(_summary.scalar(main_tag, scalar_value), global_step, walltime)

    def add_tensor(
        self,
        tag: str,
        tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a whole tensor (the ``tensor`` plugin)."""
        self._get_file_writer().add_summary(
            _summary.tensor_proto(tag, tensor), global_step, walltime
        )

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """Log a histogram of ``values``; ``bins`` is ``'tensorflow'`` (torch's default
        exponential buckets) or anything ``numpy.histogram`` takes."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(
            _summary.histogram(tag, values, bins, max_bins=max_bins), global_step, walltime
        )

    def add_histogram_raw(
        self,
        tag: str,
        min: float,
        max: float,
        num: int,
        sum: float,
        sum_squares: float,
        bucket_limits: Any,
        bucket_counts: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a histogram from precomputed statistics and buckets."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            _summary.histogram_raw(
                tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts
            ),
            global_step,
            walltime,
        )

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """Log one image (``CHW`` by default; floats in [0, 1], uint8 in [0, 255])."""
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime
        )

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """Log a batch of images, tiled into one grid (eight per row) as torch's."""
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime
        )

    def add_image_with_boxes(
        self,
        tag: str,
        img_tensor: Any,
        box_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        rescale: int = 1,
        dataformats: str = "CHW",
        labels: Any = None,
    ) -> None:
        """Not available in lazytorch: raises NotImplementedError."""
        raise NotImplementedError(
            "SummaryWriter.add_image_with_boxes is not implemented in lazytorch; draw the "
            "boxes into the image yourself and log it with add_image"
        )

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: int | None = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """Log a matplotlib figure (or a list of them) as an image (needs matplotlib)."""
        if isinstance(figure, list):
            images = _summary.figure_to_image(figure, close)
            self.add_image(tag, images, global_step, walltime, dataformats="NCHW")
        else:
            image = _summary.figure_to_image(figure, close)
            self.add_image(tag, image, global_step, walltime, dataformats="CHW")

    def add_video(
        self,
        tag: str,
        vid_tensor: Any,
        global_step: int | None = None,
        fps: int = 4,
        walltime: float | None = None,
    ) -> None:
        """Not available in lazytorch: raises NotImplementedError."""
        raise NotImplementedError(
            "SummaryWriter.add_video is not implemented in lazytorch; log frames with "
            "add_images instead"
        )

    def add_audio(
        self,
        tag: str,
        snd_tensor: Any,
        global_step: int | None = None,
        sample_rate: int = 44100,
        walltime: float | None = None,
    ) -> None:
        """Log a mono clip (samples in [-1, 1]) as a 16-bit WAV."""
        self._get_file_writer().add_summary(
            _summary.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime
        )

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a string (Markdown in TensorBoard) under ``tag + '/text_summary'``."""
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step, walltime)

    def add_onnx_graph(self, prototxt: Any) -> None:
        """Not available in lazytorch: raises NotImplementedError."""
        raise NotImplementedError(
            "SummaryWriter.add_onnx_graph is not implemented in lazytorch (it needs onnx)"
        )

    def add_graph(
        self,
        model: Any,
        input_to_model: Any = None,
        verbose: bool = False,
        use_strict_trace: bool = True,
    ) -> None:
        """Log nothing, with a warning: torch draws the graph from a ``torch.jit.trace`` of
        ``model``, which lazytorch does not have. The rest of the log is unaffected."""
        warnings.warn(
            "SummaryWriter.add_graph: lazytorch has no torch.jit.trace to build the model's "
            "graph from, so no graph is logged (scalars, images and the rest are)",
            UserWarning,
            stacklevel=2,
        )

    @staticmethod
    def _encode(rawstr: str) -> str:
        # the embedding's tag as a directory name: %, / and \ escaped
        retval = rawstr.replace("%", f"%{ord('%'):02x}")
        retval = retval.replace("/", f"%{ord('/'):02x}")
        return retval.replace("\\", f"%{ord(chr(92)):02x}")

    def add_embedding(
        self,
        mat: Any,
        metadata: Any = None,
        label_img: Any = None,
        global_step: int | None = None,
        tag: str = "default",
        metadata_header: Any = None,
    ) -> None:
        """Write projector data, as torch's: ``tensors.tsv`` (and ``metadata.tsv``,
        ``sprite.png``) in ``<log_dir>/<step:05>/<tag>``, and ``projector_config.pbtxt``."""
        mat = make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        fs = tf.io.gfile
        if fs.exists(save_path):
            if fs.isdir(save_path):
                print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
            else:
                raise NotADirectoryError(
                    f"Path: `{save_path}` exists, but is a file. Cannot proceed."
                )
        else:
            fs.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            _make_tsv(metadata, save_path, metadata_header=metadata_header)
        label_np = None
        if label_img is not None:
            label_np = make_np(label_img)
            if mat.shape[0] != label_np.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _make_sprite(label_np, save_path)
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        _make_mat(mat, save_path)
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        info = EmbeddingInfo()
        info.tensor_name = f"{tag}:{str(global_step).zfill(5)}"
        info.tensor_path = _join(subdir, "tensors.tsv")
        if metadata is not None:
            info.metadata_path = _join(subdir, "metadata.tsv")
        if label_np is not None:
            info.sprite.image_path = _join(subdir, "sprite.png")
            info.sprite.single_image_dim.extend([label_np.shape[3], label_np.shape[2]])
        self._projector_config.embeddings.extend([info])
        config_path = _join(self._get_file_writer().get_logdir(), "projector_config.pbtxt")
        with tf.io.gfile.GFile(config_path, "wb") as f:
            f.write(tf.compat.as_bytes(text_format.MessageToString(self._projector_config)))

    def add_pr_curve(
        self,
        tag: str,
        labels: Any,
        predictions: Any,
        global_step: int | None = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: float | None = None,
    ) -> None:
        """Log a precision-recall curve of binary ``labels`` against ``predictions``."""
        labels, predictions = make_np(labels), make_np(predictions)
        self._get_file_writer().add_summary(
            _summary.pr_curve(tag, labels, predictions, num_thresholds, weights),
            global_step,
            walltime,
        )

    def add_pr_curve_raw(
        self,
        tag: str,
        true_positive_counts: Any,
        false_positive_counts: Any,
        true_negative_counts: Any,
        false_negative_counts: Any,
        precision: Any,
        recall: Any,
        global_step: int | None = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: float | None = None,
    ) -> None:
        """Log a precision-recall curve from precomputed counts."""
        self._get_file_writer().add_summary(
            _summary.pr_curve_raw(
                tag,
                true_positive_counts,
                false_positive_counts,
                true_negative_counts,
                false_negative_counts,
                precision,
                recall,
                num_thresholds,
                weights,
            ),
            global_step,
            walltime,
        )

    def add_custom_scalars_multilinechart(
        self, tags: list[str], category: str = "default", title: str = "untitled"
    ) -> None:
        """A custom-scalars chart drawing ``tags`` together."""
        layout = {category: {title: ["Multiline", tags]}}
        self._get_file_writer().add_summary(_summary.custom_scalars(layout))

    def add_custom_scalars_marginchart(
        self, tags: list[str], category: str = "default", title: str = "untitled"
    ) -> None:
        """A custom-scalars margin chart of three tags (value, lower, upper)."""
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        layout = {category: {title: ["Margin", tags]}}
        self._get_file_writer().add_summary(_summary.custom_scalars(layout))

    def add_custom_scalars(self, layout: dict[str, Any]) -> None:
        """The custom-scalars layout: ``{category: {chart: [kind, tags]}}``."""
        self._get_file_writer().add_summary(_summary.custom_scalars(layout))

    def add_mesh(
        self,
        tag: str,
        vertices: Any,
        colors: Any = None,
        faces: Any = None,
        config_dict: Any = None,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Not available in lazytorch: raises NotImplementedError."""
        raise NotImplementedError("SummaryWriter.add_mesh is not implemented in lazytorch")

    def flush(self) -> None:
        """Write every pending event of every run directory to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file; a later ``add_*`` opens a new one."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        self.close()


def _join(a: str, b: str) -> str:
    if hasattr(tf.io.gfile, "join"):
        return tf.io.gfile.join(a, b)
    return tf.io.gfile.get_filesystem(a).join(a, b)


def _make_tsv(metadata: Any, save_path: str, metadata_header: Any = None) -> None:
    if not metadata_header:
        lines = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in metadata")
        lines = ["\t".join(str(e) for e in row) for row in [metadata_header, *list(metadata)]]
    with tf.io.gfile.GFile(_join(save_path, "metadata.tsv"), "wb") as f:
        f.write(tf.compat.as_bytes("\n".join(lines) + "\n"))


def _make_sprite(label_img: Any, save_path: str) -> None:
    from PIL import Image  # lazy: optional dependency (Pillow, for the sprite only)

    nrow = int(np.ceil(label_img.shape[0] ** 0.5))
    grid_chw = make_grid(label_img, ncols=nrow)
    square = np.zeros((grid_chw.shape[2], grid_chw.shape[2], 3))
    grid_hwc = grid_chw.transpose(1, 2, 0)
    square[: grid_hwc.shape[0], :, :] = grid_hwc
    picture = Image.fromarray(np.uint8((square * 255).clip(0, 255)))
    with io.BytesIO() as buf:
        picture.save(buf, format="PNG")
        data = buf.getvalue()
    with tf.io.gfile.GFile(_join(save_path, "sprite.png"), "wb") as f:
        f.write(data)


def _make_mat(mat: Any, save_path: str) -> None:
    with tf.io.gfile.GFile(_join(save_path, "tensors.tsv"), "wb") as f:
        for row in mat:
            f.write(tf.compat.as_bytes("\t".join(str(v.item()) for v in row) + "\n"))
