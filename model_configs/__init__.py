"""The model registry (registry.py, models.yaml) and each model's launch settings (launch_settings.py)."""

from .launch_settings import BACKENDS, DTYPES, WRAPPER_DTYPE, Backend, LaunchSpec
from .registry import CAIT_GROUPS, DEFAULT_REGISTRY_PATH, CaitModel, ModelSpec, Registry, load_registry
from .schema import RegistryError

__all__ = ["BACKENDS", "CAIT_GROUPS", "DEFAULT_REGISTRY_PATH", "DTYPES", "WRAPPER_DTYPE", "Backend", "CaitModel",
           "LaunchSpec", "ModelSpec", "Registry", "RegistryError", "load_registry"]
