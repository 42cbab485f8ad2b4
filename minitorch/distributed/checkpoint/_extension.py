"""distributed.checkpoint's stream extensions (PyTorch's, experimental there too): a checkpoint item
may be written through transforms (ZStandard: zstd compression), each named in the item's
_StorageInfo.transform_descriptors ("stream.zstd/1"), which a reader undoes, last one first.
FileSystemWriter(_extensions=[ZStandard()]) writes them; FileSystemReader reads PyTorch's and
minitorch's. zstd comes from the `zstandard` or the `pyzstd` module (PyTorch's choice: neither is
a dependency; the error says which to install)."""
from __future__ import annotations

import abc
import importlib
import io
from typing import IO, Dict, Optional, Sequence, Type

__all__ = ["Extension", "ExtensionRegistry", "StreamTransformExtension", "ZStandard"]

zstandard_module_name = "zstandard"
pyzstd_module_name = "pyzstd"


def _try_import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class Extension(abc.ABC):
    """A transform a checkpoint's items may go through, named by a descriptor "name/version"."""

    @staticmethod
    @abc.abstractmethod
    def registry_name() -> str: ...

    @staticmethod
    @abc.abstractmethod
    def from_descriptor(version: str) -> "Extension": ...

    @abc.abstractmethod
    def get_descriptor(self) -> str: ...


class StreamTransformExtension(Extension):
    """A transform of an item's byte stream: transform_to wraps the writer, transform_from the reader."""

    @abc.abstractmethod
    def transform_to(self, output: IO[bytes]) -> IO[bytes]: ...

    @abc.abstractmethod
    def transform_from(self, input: IO[bytes]) -> IO[bytes]: ...


class _PyzstdWriter(io.RawIOBase):
    """pyzstd's compressor as a stream: what is written goes compressed to output; close() ends
    the frame (it does not close output)."""

    def __init__(self, output: IO[bytes], pyzstd) -> None:
        super().__init__()
        self.output = output
        self.compressor = pyzstd.ZstdCompressor()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.output.write(self.compressor.compress(b))
        return len(memoryview(b))

    def close(self) -> None:
        if not self.closed:
            self.output.write(self.compressor.flush())
            self.output.flush()
        super().close()


class ZStandard(StreamTransformExtension):
    """zstd compression of each item ("stream.zstd/1"), as PyTorch's."""

    @staticmethod
    def _modules():
        return _try_import(zstandard_module_name), _try_import(pyzstd_module_name)

    @staticmethod
    def is_available() -> bool:
        return any(m is not None for m in ZStandard._modules())

    @staticmethod
    def from_descriptor(version: str) -> "ZStandard":
        if version.partition(".")[0] != "1":
            raise ValueError(f"Unknown extension {version=}")
        if not ZStandard.is_available():
            raise ValueError(f"Stream with ZStandard compression cannot be processed because "
                             f"no module named '{zstandard_module_name}' or '{pyzstd_module_name}'")
        return ZStandard()

    @staticmethod
    def registry_name() -> str:
        return "stream.zstd"

    def __init__(self) -> None:
        if not ZStandard.is_available():
            raise ValueError(f"ZStandard extension is unavailable because no module named "
                             f"'{zstandard_module_name}' or '{pyzstd_module_name}'")

    def get_descriptor(self) -> str:
        return f"{self.registry_name()}/1"

    def transform_to(self, output: IO[bytes]) -> IO[bytes]:
        """A writer compressing into output; closing it ends the zstd frame (output stays open)."""
        zstandard, pyzstd = self._modules()
        if zstandard is not None:
            return zstandard.ZstdCompressor().stream_writer(output, closefd=False)
        return _PyzstdWriter(output, pyzstd)

    def transform_from(self, input: IO[bytes]) -> IO[bytes]:
        """A reader of input's zstd frames, decompressed (frames written by a stream carry no
        size: read through a decompressing stream, not in one call)."""
        zstandard, pyzstd = self._modules()
        if zstandard is not None:
            return zstandard.ZstdDecompressor().stream_reader(input)
        return io.BytesIO(pyzstd.decompress(input.read()))


class ExtensionRegistry:
    """The extensions a reader knows, by registry name (ZStandard's by default)."""

    def __init__(self) -> None:
        self.extensions: Dict[str, Type[Extension]] = {cls.registry_name(): cls for cls in (ZStandard,)}

    def register(self, cls: Type[Extension]) -> None:
        self.extensions[cls.registry_name()] = cls

    def from_descriptor_list(self, descriptors: Sequence[str]) -> Sequence[Extension]:
        """The extensions the descriptors ("name/version", as get_descriptor wrote them) name."""
        out = []
        for desc in descriptors:
            name, _, version = desc.partition("/")
            ext: Optional[Type[Extension]] = self.extensions.get(name)
            if not ext:
                raise ValueError(f"Unknown extension {name=}")
            out.append(ext.from_descriptor(version))
        return out
