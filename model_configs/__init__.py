"""The model registry (registry.py, models.yaml) and each model's launch settings (launch_settings.py)."""

from .launch_settings import BACKENDS, DTYPES, WRAPPER_DTYPE, Backend, LaunchSpec
from .registry import (CAIT_GROUPS, DEFAULT_REGISTRY_PATH, REGISTRY_BESIDE_LOGS, CaitModel, ModelSpec, Registry,
                       load_registry)
from .schema import RegistryError

__all__ = ["BACKENDS", "CAIT_GROUPS", "DEFAULT_REGISTRY_PATH", "DTYPES", "REGISTRY_BESIDE_LOGS", "WRAPPER_DTYPE", "Backend", "CaitModel",
           "LaunchSpec", "ModelSpec", "Registry", "RegistryError", "load_registry"]
