"""InternVL3.5 with its thinking switch, for lmms-eval 0.7.3: lmms-eval's `internvl_hf` chat wrapper
(transformers-native `-HF` checkpoints) plus a system prompt.

InternVL3.5 has no chat-template flag for reasoning; its model card (and vLLM's InternVL3.5 recipe) turn
thinking on with a system prompt: "To enable thinking mode, please set the system prompt to our Thinking
System Prompt" (THINKING_SYSTEM_PROMPT below, verbatim). lmms-eval's internvl_hf sends the task's
messages as they are, and its remote-code internvl3_5 wrapper calls `model.chat` with the checkpoint's
own system message, so neither can switch it on.

  lmms-eval --model internvl_thinking --model_args pretrained=OpenGVLab/InternVL3_5-8B-HF,thinking=true ...

model_args: those of internvl_hf (pretrained, device, device_map, batch_size 1, min_patches, max_patches,
attn_implementation, ...), plus
  thinking       true: the Thinking System Prompt opens every conversation; false (default): as internvl_hf
  system_prompt  another system text (not together with thinking)
Any other model_arg fails (internvl_hf itself ignores unknown ones silently).

The reply keeps the reasoning: "<think>...</think>" then the answer; the tasks' answer extraction drops
the think block, so a budget that cuts the reasoning short leaves no answer (launch settings give
thinking models a larger max_new_tokens). Decoding follows the task (greedy here, as the CAIT paper's
T=0); the card recommends temperature 0.6 in thinking mode against repetition: --gen_kwargs temperature=0.6.
"""

from __future__ import annotations

import dataclasses
import inspect

from lmms_eval.api.instance import GenerationResult, Instance
from lmms_eval.models.chat.internvl_hf import InternVLHf

THINKING_SYSTEM_PROMPT = """
You are an AI assistant that rigorously follows this response protocol:

1. First, conduct a detailed analysis of the question. Consider different angles, potential solutions, and reason through the problem step-by-step. Enclose this entire thinking process within <think> and </think> tags.

2. After the thinking section, provide a clear, concise, and direct answer to the user's question. Separate the answer from the think section with a newline.

Ensure that the thinking process is thorough but remains focused on the query. The final answer should be standalone and not reference the thinking section.
""".strip()

_BASE_ARGUMENTS = {name for name in inspect.signature(InternVLHf.__init__).parameters if name not in ("self", "kwargs")}


class InternVLThinking(InternVLHf):
    is_simple = False

    def __init__(self, thinking: bool = False, system_prompt: str | None = None, **kwargs) -> None:
        unknown = sorted(set(kwargs) - _BASE_ARGUMENTS)
        if unknown:
            raise ValueError(f"Unexpected model_args for internvl_thinking: {unknown}")
        if not isinstance(thinking, bool):
            raise ValueError(f"thinking must be true or false, got {thinking!r}")
        if thinking and system_prompt:
            raise ValueError("give thinking=true or a system_prompt, not both")
        super().__init__(**kwargs)
        self.system_prompt = THINKING_SYSTEM_PROMPT if thinking else system_prompt

    def _with_system_prompt(self, request: Instance) -> Instance:
        """The request with a doc_to_messages that opens with the system turn (the original is left as it is)."""
        context, to_messages, *rest = request.arguments
        system = {"role": "system", "content": [{"type": "text", "text": self.system_prompt}]}

        def messages(doc):
            return [system, *to_messages(doc)]

        return dataclasses.replace(request, arguments=(context, messages, *rest))

    def generate_until(self, requests: list[Instance]) -> list[GenerationResult]:
        if not self.system_prompt:
            return super().generate_until(requests)
        return super().generate_until([self._with_system_prompt(request) for request in requests])
