"""minitorch.ao.quantization (also minitorch.quantization): eager-mode quantization as PyTorch's:
quantize_dynamic; module fusion (fuse_modules, fuse_modules_qat); static post-training
quantization (QuantStub/DeQuantStub, prepare, calibration, convert) for Linear, Conv2d, their
fused ReLU forms, ReLU6 and FloatFunctional; FakeQuantize and its switches; QConfig and the
default configurations; the observers."""
from .observer import (  # noqa: F401
    HistogramObserver, MinMaxObserver, MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver, NoopObserver, ObserverBase, PerChannelMinMaxObserver,
    PlaceholderObserver, default_dynamic_quant_observer, default_float_qparams_observer, default_histogram_observer, default_observer,
    default_per_channel_weight_observer, default_placeholder_observer, default_weight_observer,
)
from .qconfig import (  # noqa: F401
    QConfig, QConfigDynamic, default_dynamic_qconfig, default_per_channel_qconfig, default_qconfig,
    default_qat_qconfig, float16_dynamic_qconfig, float_qparams_weight_only_qconfig, get_default_qat_qconfig,
    get_default_qconfig, per_channel_dynamic_qconfig,
)
from .quantization_mappings import DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS  # noqa: F401
from .quantization_mappings import get_default_dynamic_quant_module_mappings  # noqa: F401
from .quantization_mappings import DEFAULT_STATIC_QUANT_MODULE_MAPPINGS  # noqa: F401
from .quantization_mappings import get_default_static_quant_module_mappings  # noqa: F401
from .quantize import convert, prepare, propagate_qconfig_, quantize, quantize_dynamic, swap_module  # noqa: F401
from .quantize import prepare_qat, quantize_qat  # noqa: F401
from .fake_quantize import FakeQuantize, FakeQuantizeBase, default_fake_quant, default_weight_fake_quant  # noqa: F401
from .fake_quantize import default_per_channel_weight_fake_quant  # noqa: F401
from .fake_quantize import FusedMovingAvgObsFakeQuantize, default_fused_act_fake_quant  # noqa: F401
from .fake_quantize import default_fused_per_channel_wt_fake_quant, default_fused_wt_fake_quant  # noqa: F401
from .fake_quantize import disable_fake_quant, disable_observer, enable_fake_quant, enable_observer  # noqa: F401
from .fuse_modules import fuse_known_modules, fuse_modules, fuse_modules_qat  # noqa: F401
from .fuser_method_mappings import fuse_conv_bn, fuse_conv_bn_relu, fuse_linear_bn, get_fuser_method  # noqa: F401
from .stubs import DeQuantStub, QuantStub, QuantWrapper  # noqa: F401
