# Type stub of the PyO3 extension module (rust/lib.rs). Use the documented wrappers in
# lwcbench/__init__.py; these are their native counterparts.
from typing import Any, Callable, Dict, List, Optional

__version__: str

class LwcbenchError(Exception): ...
class InputError(LwcbenchError, ValueError): ...
class AuthenticationError(LwcbenchError, ValueError): ...
class ServiceError(LwcbenchError): ...

def ciphers() -> List[Dict[str, Any]]: ...
def presets_list() -> List[Dict[str, Any]]: ...
def keystream(cipher_id: str, key: bytes, iv: bytes, nbits: int) -> bytes: ...
def encrypt(cipher_id: str, key: bytes, iv: bytes, data: bytes, ad: bytes = ...) -> bytes: ...
def decrypt(cipher_id: str, key: bytes, iv: bytes, data: bytes, ad: bytes = ...) -> bytes: ...
def run(
    preset: Optional[str] = ...,
    cipher: List[str] = ...,
    implementation: List[str] = ...,
    scenario: List[str] = ...,
    sizes: List[int] = ...,
    kiv: List[str] = ...,
    reps: Optional[int] = ...,
    warmup: Optional[int] = ...,
    seed: Optional[int] = ...,
    out: Optional[str] = ...,
    force: bool = ...,
    key: Optional[bytes] = ...,
    iv: Optional[bytes] = ...,
    min_sample_us: Optional[float] = ...,
    call: List[str] = ...,
    progress: Optional[Callable[[int, int, str], Any]] = ...,
    all: bool = ...,
    payload: Optional[str] = ...,
    dataset: Optional[str] = ...,
    channels: List[str] = ...,
    encoding: str = ...,
    byte_order: str = ...,
    layout: str = ...,
    readings: Optional[int] = ...,
    report: bool = ...,
    dataset_encoding: str = ...,
    power_profile: Optional[str] = ...,
    watts: Optional[float] = ...,
    board: Optional[str] = ...,
    energy_from: Optional[str] = ...,
    video: Optional[str] = ...,
    frames: Optional[int] = ...,
    engine: List[str] = ...,
    weights: Optional[str] = ...,
    budget: List[str] = ...,
    repeat: int = ...,
    counter: str = ...,
    twin: Optional[int] = ...,
) -> str: ...
def run_options() -> List[str]: ...
def verify(cipher: List[str] = ..., vectors: Optional[str] = ..., torture_loops: int = ...) -> List[Dict[str, Any]]: ...
def report(dir: str) -> str: ...
def vectors_dir() -> Optional[str]: ...
def choose(board: str, radio: str, interval: str, payload: str = ..., flash: Optional[str] = ..., ram: Optional[str] = ...,
           security: int = ..., tag: int = ..., require: Optional[str] = ..., weights: Optional[str] = ...,
           lifetime: str = ..., allow_provisional: bool = ..., allow_variable_time: bool = ..., chemistry: str = ..., battery_mah: float = ..., battery_v: float = ...,
           region: Optional[str] = ..., sleep_ua: Optional[float] = ..., active_ma: Optional[float] = ...,
           boards: Optional[str] = ..., radios: Optional[str] = ..., dtim: Optional[int] = ...,
           framing: Optional[str] = ..., edhoc: bool = ..., cipher: Optional[str] = ...,
           out: Optional[str] = ..., force: bool = ...) -> str: ...
def link(argv: List[str]) -> Optional[str]: ...
def mcu(argv: List[str], call: Optional[List[str]] = ...) -> None: ...
def mcu_check_board(argv: List[str]) -> Dict[str, Any]: ...
def collect(argv: List[str], call: Optional[List[str]] = ...) -> str: ...
def compare(a: str, b: str, margin: float, html: Optional[str] = ...) -> Dict[str, Any]: ...
