"""The ``Summary`` protocol buffers `SummaryWriter` writes, built as torch's are.

Each builder gives the proto torch.utils.tensorboard.summary's function of the same name
gives for the same values (same tags, plugin metadata, histogram buckets, PNG encoding), so
a run logged with lazytorch reads back in TensorBoard as torch's does. The bucket rule,
the image layout (`convert_to_HWC`, `make_grid`) and the precision-recall counts follow
torch's (BSD-3-Clause, Copyright (c) PyTorch contributors) step for step for that reason.
"""

from __future__ import annotations

import io
import logging
import struct
import wave
from typing import Any

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.hparams.api_pb2 import (
    DataType,
    Experiment,
    HParamInfo,
    MetricInfo,
    MetricName,
    Status,
)
from tensorboard.plugins.hparams.metadata import (
    EXPERIMENT_TAG,
    PLUGIN_DATA_VERSION,
    PLUGIN_NAME,
    SESSION_END_INFO_TAG,
    SESSION_START_INFO_TAG,
)
from tensorboard.plugins.hparams.plugin_data_pb2 import (
    HParamsPluginData,
    SessionEndInfo,
    SessionStartInfo,
)
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from lazytorch.ir import dtypes as dt
from lazytorch.tensor import Tensor

__all__ = [
    "audio",
    "convert_to_HWC",
    "custom_scalars",
    "figure_to_image",
    "histogram",
    "histogram_raw",
    "hparams",
    "image",
    "make_grid",
    "make_histogram",
    "make_image",
    "make_np",
    "pr_curve",
    "pr_curve_raw",
    "scalar",
    "tensor_proto",
    "text",
]

logger = logging.getLogger(__name__)


def make_np(x: Any) -> np.ndarray:
    """Return ``x`` (a lazytorch tensor, NumPy array or Python/NumPy scalar) as an array.

    A tensor is detached and read (a materialization point); bfloat16 becomes float16 as
    in torch's writer. A scalar becomes a one-element array.
    """
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.device.type == "meta":
            # torch's writer logs a random number for a meta tensor (it has no values)
            return np.random.randn(1)
        if x.dtype == dt.bfloat16:
            x = x.to(dt.float16)
        return x.detach().cpu()._values()  # a read: no memory shared with NumPy
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(
    name: str,
    tensor: Any,
    collections: Any = None,
    new_style: bool = False,
    double_precision: bool = False,
) -> Summary:
    """A ``Summary`` holding one scalar (``simple_value``, or a tensor when ``new_style``)."""
    array = make_np(tensor).squeeze()
    if array.ndim != 0:
        raise AssertionError(
            f"Tensor should contain one element (0 dimensions). Was given size: "
            f"{array.size} and {array.ndim} dimensions."
        )
    value = float(array)
    if new_style:
        if double_precision:
            proto = TensorProto(double_val=[value], dtype="DT_DOUBLE")
        else:
            proto = TensorProto(float_val=[value], dtype="DT_FLOAT")
        smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
        return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=smd)])
    return Summary(value=[Summary.Value(tag=name, simple_value=value)])


def _half_to_int(f: float) -> int:
    # torch's writer stores a half value as its float32 bit pattern (summary.half_to_int)
    return struct.unpack("i", struct.pack("f", f))[0]


def _to_list(a: np.ndarray) -> list[Any]:
    return a.reshape(-1).tolist()


def _to_half_val(a: np.ndarray) -> list[int]:
    return [_half_to_int(v) for v in a.astype(np.float32).reshape(-1).tolist()]


# dtype -> (proto dtype, proto field, conversion), as torch's _TENSOR_TYPE_MAP (uint8's
# later entry there wins: uint32_val)
_TENSOR_TYPES = {
    dt.float16: ("DT_HALF", "half_val", _to_half_val),
    dt.bfloat16: ("DT_BFLOAT16", "half_val", _to_half_val),
    dt.float32: ("DT_FLOAT", "float_val", _to_list),
    dt.float64: ("DT_DOUBLE", "double_val", _to_list),
    dt.int8: ("DT_INT8", "int_val", _to_list),
    dt.uint8: ("DT_UINT8", "uint32_val", _to_list),
    dt.int16: ("DT_INT16", "int_val", _to_list),
    dt.int32: ("DT_INT32", "int_val", _to_list),
    dt.int64: ("DT_INT64", "int64_val", _to_list),
    dt.bool_: ("DT_BOOL", "bool_val", _to_list),
}


def tensor_proto(tag: str, tensor: Tensor) -> Summary:
    """A ``Summary`` holding the whole tensor (the ``tensor`` plugin), as torch's."""
    if tensor.numel() * tensor.element_size() >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if tensor.dtype not in _TENSOR_TYPES:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    proto_dtype, field, convert = _TENSOR_TYPES[tensor.dtype]
    values = tensor.detach().cpu()._values()
    proto = TensorProto(
        dtype=proto_dtype,
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in tensor.shape]),
        **{field: convert(values)},
    )
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd, tensor=proto)])


def histogram_raw(
    name: str,
    min: float,
    max: float,
    num: int,
    sum: float,
    sum_squares: float,
    bucket_limits: Any,
    bucket_counts: Any,
) -> Summary:
    """A histogram ``Summary`` from precomputed statistics and buckets."""
    hist = HistogramProto(
        min=min,
        max=max,
        num=num,
        sum=sum,
        sum_squares=sum_squares,
        bucket_limit=bucket_limits,
        bucket=bucket_counts,
    )
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram(name: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    """A histogram ``Summary`` of ``values`` (any shape, read as float64)."""
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def make_histogram(values: np.ndarray, bins: Any, max_bins: int | None = None) -> HistogramProto:
    """torch's histogram: ``np.histogram`` buckets, merged down to ``max_bins``, trimmed to
    the non-empty range with one empty bucket kept in front."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    num_bins = len(counts)
    if max_bins is not None and num_bins > max_bins:
        subsampling = num_bins // max_bins
        remainder = num_bins % subsampling
        if remainder != 0:
            counts = np.pad(
                counts,
                pad_width=[[0, subsampling - remainder]],
                mode="constant",
                constant_values=0,
            )
        counts = counts.reshape(-1, subsampling).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:subsampling]
        new_limits[-1] = limits[-1]
        limits = new_limits
    cum_counts = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start = int(start)
    end = int(end) + 1
    counts = counts[start - 1 : end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start : end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(
        min=values.min(),
        max=values.max(),
        num=len(values),
        sum=values.sum(),
        sum_squares=values.dot(values),
        bucket_limit=limits.tolist(),
        bucket=counts.tolist(),
    )


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """Tile an ``(N, C, H, W)`` batch (C of 1 or 3) into one ``(3, H * rows, W * cols)``."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    nimg, _, height, width = images.shape
    ncols = min(nimg, ncols)
    nrows = int(np.ceil(float(nimg) / ncols))
    canvas = np.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(nimg):
        y, x = divmod(i, ncols)
        canvas[:, y * height : (y + 1) * height, x * width : (x + 1) * width] = images[i]
    return canvas


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:
    """An image array in ``input_format`` (``NCHW``, ``CHW``, ``HWC``, ``HW``, ...) as HWC
    with 3 channels (a batch is tiled by `make_grid`, one channel repeated)."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(
            f"You can not use the same dimension shorthand twice. input_format: {input_format}"
        )
    if len(tensor.shape) != len(input_format):
        raise AssertionError(
            f"size of input tensor and input format are different. tensor shape: "
            f"{tensor.shape}, input_format: {input_format}"
        )
    input_format = input_format.upper()
    if len(input_format) == 4:
        index = [input_format.find(c) for c in "NCHW"]
        return make_grid(tensor.transpose(index)).transpose(1, 2, 0)
    if len(input_format) == 3:
        index = [input_format.find(c) for c in "HWC"]
        hwc = tensor.transpose(index)
        if hwc.shape[2] == 1:
            hwc = np.concatenate([hwc, hwc, hwc], 2)
        return hwc
    if len(input_format) == 2:
        index = [input_format.find(c) for c in "HW"]
        hw = tensor.transpose(index)
        return np.stack([hw, hw, hw], 2)
    # torch's convert_to_HWC falls through here and returns None
    raise AssertionError(f"input_format should have 2, 3 or 4 dimensions, got {input_format!r}")


def make_image(tensor: np.ndarray, rescale: float = 1) -> Summary.Image:
    """A PNG ``Summary.Image`` of an HWC uint8 array (needs Pillow, as torch's)."""
    from PIL import Image  # lazy: optional dependency (Pillow, for images only)

    height, width, channel = tensor.shape
    picture = Image.fromarray(tensor)
    picture = picture.resize(
        (int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS
    )
    with io.BytesIO() as output:
        picture.save(output, format="PNG")
        encoded = output.getvalue()
    return Summary.Image(
        height=height, width=width, colorspace=channel, encoded_image_string=encoded
    )


def image(tag: str, tensor: Any, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """An image ``Summary``: floats are scaled by 255, uint8 kept, then clipped to 0..255."""
    array = convert_to_HWC(make_np(tensor), dataformats)
    scale = 1 if array.dtype == np.uint8 else 255
    array = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(array, rescale=rescale))])


def figure_to_image(figures: Any, close: bool = True) -> np.ndarray:
    """Render a matplotlib figure (or a list: stacked) to a CHW uint8 array."""
    import matplotlib.backends.backend_agg as backend_agg  # lazy: optional dependency
    import matplotlib.pyplot as plt  # lazy: optional dependency (matplotlib)

    def render(figure: Any) -> np.ndarray:
        canvas = backend_agg.FigureCanvasAgg(figure)
        canvas.draw()
        data = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
        w, h = figure.canvas.get_width_height()
        chw = np.moveaxis(data.reshape([h, w, 4])[:, :, 0:3], source=2, destination=0)
        if close:
            plt.close(figure)
        return chw

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


def text(tag: str, text: str) -> Summary:
    """A text-plugin ``Summary`` under ``tag + '/text_summary'``, as torch's."""
    plugin_data = SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()
    )
    proto = TensorProto(
        dtype="DT_STRING",
        string_val=[text.encode(encoding="utf_8")],
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
    )
    return Summary(
        value=[
            Summary.Value(
                tag=tag + "/text_summary",
                metadata=SummaryMetadata(plugin_data=plugin_data),
                tensor=proto,
            )
        ]
    )


def _hparams_summary(tag: str, content: HParamsPluginData) -> Summary:
    smd = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(
            plugin_name=PLUGIN_NAME, content=content.SerializeToString()
        )
    )
    return Summary(value=[Summary.Value(tag=tag, metadata=smd)])


def _domain(values: list[Any], kind: str) -> struct_pb2.ListValue:
    return struct_pb2.ListValue(values=[struct_pb2.Value(**{kind: v}) for v in values])


def hparams(
    hparam_dict: Any = None, metric_dict: Any = None, hparam_domain_discrete: Any = None
) -> tuple[Summary, Summary, Summary]:
    """The hparams plugin's three summaries: experiment, session start, session end.

    As torch's: ``int``, ``float`` and ``bool`` values are numbers (a bool is an int), a
    one-element tensor its first value, ``None`` is left out, anything else raises
    ValueError.
    """
    if not isinstance(hparam_dict, dict):
        logger.warning("parameter: hparam_dict should be a dictionary, nothing logged.")
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        logger.warning("parameter: metric_dict should be a dictionary, nothing logged.")
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if (
            k not in hparam_dict
            or not isinstance(v, list)
            or not all(isinstance(d, type(hparam_dict[k])) for d in v)
        ):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                f"hparam_dict[{k}]."
            )
    infos = []
    ssi = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, (int, float)):
            ssi.hparams[k].number_value = v
            domain = (
                _domain(hparam_domain_discrete[k], "number_value")
                if k in hparam_domain_discrete
                else None
            )
            infos.append(
                HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64"), domain_discrete=domain)
            )
        elif isinstance(v, str):
            ssi.hparams[k].string_value = v
            domain = (
                _domain(hparam_domain_discrete[k], "string_value")
                if k in hparam_domain_discrete
                else None
            )
            infos.append(
                HParamInfo(name=k, type=DataType.Value("DATA_TYPE_STRING"), domain_discrete=domain)
            )
        elif isinstance(v, Tensor):
            ssi.hparams[k].number_value = make_np(v)[0]
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
    start = _hparams_summary(
        SESSION_START_INFO_TAG,
        HParamsPluginData(session_start_info=ssi, version=PLUGIN_DATA_VERSION),
    )
    experiment = Experiment(
        hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict]
    )
    exp = _hparams_summary(
        EXPERIMENT_TAG, HParamsPluginData(experiment=experiment, version=PLUGIN_DATA_VERSION)
    )
    end = _hparams_summary(
        SESSION_END_INFO_TAG,
        HParamsPluginData(
            session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS")),
            version=PLUGIN_DATA_VERSION,
        ),
    )
    return exp, start, end


def audio(tag: str, tensor: Any, sample_rate: int = 44100) -> Summary:
    """A 16-bit mono WAV ``Summary.Audio`` of samples in [-1, 1] (clipped beyond)."""
    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    array = (array * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as fio:
        with wave.open(fio, "wb") as wave_write:
            wave_write.setnchannels(1)
            wave_write.setsampwidth(2)
            wave_write.setframerate(sample_rate)
            wave_write.writeframes(array.data)
        encoded = fio.getvalue()
    proto = Summary.Audio(
        sample_rate=sample_rate,
        num_channels=1,
        length_frames=array.shape[-1],
        encoded_audio_string=encoded,
        content_type="audio/wav",
    )
    return Summary(value=[Summary.Value(tag=tag, audio=proto)])


def custom_scalars(layout: dict[str, Any]) -> Summary:
    """The custom-scalars plugin's layout ``Summary`` (``Multiline`` and ``Margin`` charts)."""
    categories = []
    for category, charts_dict in layout.items():
        charts = []
        for chart_name, chart_metadata in charts_dict.items():
            tags = chart_metadata[1]
            if chart_metadata[0] == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = layout_pb2.MarginChartContent.Series(
                    value=tags[0], lower=tags[1], upper=tags[2]
                )
                chart = layout_pb2.Chart(
                    title=chart_name, margin=layout_pb2.MarginChartContent(series=[series])
                )
            else:
                chart = layout_pb2.Chart(
                    title=chart_name, multiline=layout_pb2.MultilineChartContent(tag=tags)
                )
            charts.append(chart)
        categories.append(layout_pb2.Category(title=category, chart=charts))
    proto = TensorProto(
        dtype="DT_STRING",
        string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
        tensor_shape=TensorShapeProto(),
    )
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    return Summary(
        value=[Summary.Value(tag="custom_scalars__config__", tensor=proto, metadata=smd)]
    )


def _pr_summary(tag: str, data: np.ndarray, num_thresholds: int) -> Summary:
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    smd = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(plugin_name="pr_curves", content=content)
    )
    proto = TensorProto(
        dtype="DT_FLOAT",
        float_val=data.reshape(-1).tolist(),
        tensor_shape=TensorShapeProto(
            dim=[TensorShapeProto.Dim(size=data.shape[0]), TensorShapeProto.Dim(size=data.shape[1])]
        ),
    )
    return Summary(value=[Summary.Value(tag=tag, metadata=smd, tensor=proto)])


def pr_curve_raw(
    tag: str,
    tp: Any,
    fp: Any,
    tn: Any,
    fn: Any,
    precision: Any,
    recall: Any,
    num_thresholds: int = 127,
    weights: Any = None,
) -> Summary:
    """A precision-recall ``Summary`` from precomputed counts."""
    num_thresholds = min(num_thresholds, 127)
    data = np.stack([make_np(a) for a in (tp, fp, tn, fn, precision, recall)])
    return _pr_summary(tag, data, num_thresholds)


def pr_curve(
    tag: str, labels: Any, predictions: Any, num_thresholds: int = 127, weights: Any = None
) -> Summary:
    """A precision-recall ``Summary`` of binary ``labels`` against ``predictions`` in [0, 1]."""
    num_thresholds = min(num_thresholds, 127)
    labels, predictions = make_np(labels), make_np(predictions)
    weights = 1.0 if weights is None else weights
    bucket_indices = np.int32(np.floor(predictions * (num_thresholds - 1)))
    float_labels = labels.astype(np.float64)
    span = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(
        bucket_indices, bins=num_thresholds, range=span, weights=float_labels * weights
    )
    fp_buckets, _ = np.histogram(
        bucket_indices, bins=num_thresholds, range=span, weights=(1.0 - float_labels) * weights
    )
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(1e-07, tp + fp)
    recall = tp / np.maximum(1e-07, tp + fn)
    return _pr_summary(tag, np.stack((tp, fp, tn, fn, precision, recall)), num_thresholds)
