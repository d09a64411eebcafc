"""Molmo 2 for lmms-eval 0.7.3, which has no wrapper for it: a chat model over transformers' native
`molmo2` architecture (Molmo2ForConditionalGeneration + Molmo2Processor, no remote code).

  lmms-eval --model molmo2 --model_args pretrained=allenai/Molmo2-8B --tasks ...

model_args:
  pretrained           hub id or local folder
  device, device_map   as in lmms-eval's wrappers; on CPU pass device_map=cpu
  batch_size           requests per generate call (left-padded)
  dtype                torch dtype of the weights, bfloat16 by default
  attn_implementation  sdpa or eager (Molmo2 does not support flash attention)
  max_crops            high-resolution crops per image, the image processor's resolution budget (its
                       saved value when not given)
  system_prompt        text that opens the first user turn: Molmo2's chat template has no system turn
  use_cache            KV cache during generation
Any other model_arg fails.

Requests come through the task's doc_to_messages, so several images per question reach the model in
order (the chat template numbers them). Decoding is greedy whatever the task's sampling settings, with
max_new_tokens from gen_kwargs, and stops at the end-of-turn token; like lmms-eval's other chat
wrappers it does not cut the text at `until`. The plain chat template is used, with no reasoning
prompt, so the model answers without a thinking preamble.
"""

from __future__ import annotations

import time

import torch
from accelerate import Accelerator
from tqdm import tqdm
from transformers import AutoProcessor, Molmo2ForConditionalGeneration
from transformers.image_utils import load_image

from lmms_eval import utils
from lmms_eval.api.instance import GenerationResult, Instance, TokenCounts
from lmms_eval.api.model import lmms
from lmms_eval.models.model_utils.gen_metrics import log_metrics
from lmms_eval.protocol import ChatMessages

DEFAULT_MAX_NEW_TOKENS = 1024  # lmms-eval's llava_hf and internvl_hf use the same when a task sets none
ATTN_IMPLEMENTATIONS = (None, "sdpa", "eager")


class Molmo2(lmms):
    is_simple = False

    def __init__(
        self,
        pretrained: str = "allenai/Molmo2-8B",
        device: str = "cuda",
        device_map: str | None = "auto",
        batch_size: int | str = 1,
        dtype: str = "bfloat16",
        attn_implementation: str | None = None,
        max_crops: int | None = None,
        system_prompt: str | None = None,
        use_cache: bool = True,
        **kwargs,
    ) -> None:
        super().__init__()
        if kwargs:
            raise ValueError(f"Unexpected model_args for molmo2: {sorted(kwargs)}")
        if attn_implementation not in ATTN_IMPLEMENTATIONS:
            raise ValueError(f"attn_implementation must be one of {ATTN_IMPLEMENTATIONS}, got {attn_implementation!r}")

        self.accelerator = Accelerator()
        if self.accelerator.num_processes > 1:  # data parallel: one full model per rank
            self._device = torch.device(f"cuda:{self.accelerator.local_process_index}")
            device_map = str(self._device)
        else:
            self._device = torch.device(device)
            device_map = device_map or device
        self._rank = self.accelerator.process_index
        self._world_size = self.accelerator.num_processes

        model_kwargs = {"dtype": dtype, "device_map": device_map}
        if attn_implementation is not None:
            model_kwargs["attn_implementation"] = attn_implementation
        self._model = Molmo2ForConditionalGeneration.from_pretrained(pretrained, **model_kwargs).eval()
        self.processor = AutoProcessor.from_pretrained(pretrained)
        self._tokenizer = self.processor.tokenizer
        self._config = self._model.config
        self.batch_size_per_gpu = int(batch_size)
        self.image_kwargs = {} if max_crops is None else {"max_crops": int(max_crops)}
        self.system_prompt = self._resolve_system_prompt(system_prompt)
        self.use_cache = use_cache

    @property
    def config(self):
        return self._config

    @property
    def tokenizer(self):
        return self._tokenizer

    @property
    def model(self):
        return self._model

    @property
    def eot_token_id(self):
        return self.tokenizer.eos_token_id

    @property
    def pad_token_id(self):
        """Fills the rows of a batch that stopped early; EOS when the tokenizer has no pad token."""
        return self.eot_token_id if self.tokenizer.pad_token_id is None else self.tokenizer.pad_token_id

    @property
    def batch_size(self):
        return self.batch_size_per_gpu

    @property
    def device(self):
        return self._device

    def _molmo2_messages(self, chat: ChatMessages) -> list[dict]:
        """The request as Molmo2's template expects it: system text (ours, then the task's) opens the first user turn."""
        system_texts = [self.system_prompt] if self.system_prompt else []
        messages = []
        for message in chat.to_hf_messages():
            if message["role"] == "system":
                system_texts += [item["text"] for item in message["content"] if item["type"] == "text"]
            else:
                messages.append(message)
        if system_texts:
            messages[0]["content"] = [{"type": "text", "text": "\n".join(system_texts)}] + messages[0]["content"]
        return messages

    def generate_until(self, requests: list[Instance]) -> list[GenerationResult]:
        results = []
        # sort by prompt, and never batch requests whose generation kwargs differ
        collator = utils.Collator([request.args for request in requests], lambda args: (args[0], args[0]),
                                  group_fn=lambda args: args[2], grouping=True)
        progress = tqdm(total=len(requests), disable=self.rank != 0, desc="Model Responding")
        generate_seconds, generated_tokens = 0.0, 0  # results.json throughput, as lmms-eval's own wrappers log it
        for chunk in collator.get_batched(n=self.batch_size, batch_fn=None):
            contexts, doc_to_messages, all_gen_kwargs, doc_ids, tasks, splits = zip(*chunk, strict=True)
            prompts, images = [], []
            for to_messages, doc_id, task, split in zip(doc_to_messages, doc_ids, tasks, splits, strict=True):
                chat = ChatMessages(messages=to_messages(self.task_dict[task][split][doc_id]))
                request_images, videos, audios = chat.extract_media()
                if videos or audios:
                    raise NotImplementedError(f"molmo2 wrapper takes images and text only; {task} doc {doc_id} "
                                              "has video or audio")
                images += [load_image(image) if isinstance(image, str) else image for image in request_images]
                prompts.append(self.processor.apply_chat_template(self._molmo2_messages(chat), tokenize=False,
                                                                  add_generation_prompt=True))
            inputs = self.processor(text=prompts, images=images or None, padding=True, padding_side="left",
                                    return_tensors="pt", **self.image_kwargs).to(self.model.device)
            # the Collator groups by gen_kwargs, so the chunk shares one budget
            max_new_tokens = int(all_gen_kwargs[0].get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS))
            started = time.perf_counter()
            with torch.inference_mode():
                output = self.model.generate(**inputs, do_sample=False, max_new_tokens=max_new_tokens,
                                             use_cache=self.use_cache, eos_token_id=self.eot_token_id,
                                             pad_token_id=self.pad_token_id)
            generate_seconds += time.perf_counter() - started
            new_tokens = output[:, inputs["input_ids"].shape[1]:]  # left padding: every prompt ends at the same column
            texts = self.processor.batch_decode(new_tokens, skip_special_tokens=True, clean_up_tokenization_spaces=False)
            for context, gen_kwargs, text, tokens in zip(contexts, all_gen_kwargs, texts, new_tokens, strict=True):
                generated = int((tokens != self.pad_token_id).sum())  # rows that stopped early are padded
                generated_tokens += generated
                results.append(GenerationResult(text=text, token_counts=TokenCounts(output_tokens=generated)))
                self.cache_hook.add_partial("generate_until", (context, gen_kwargs), text)
            progress.update(len(chunk))
        progress.close()
        log_metrics(total_gen_tokens=generated_tokens, total_elapsed_time=generate_seconds,
                    avg_speed=generated_tokens / generate_seconds if generate_seconds else 0.0,
                    additional_metrics={"rank": self.rank})
        return collator.get_original(results)

    def loglikelihood(self, requests: list[Instance]):
        raise NotImplementedError("molmo2 is a generation-only wrapper: loglikelihood is not implemented")

    def generate_until_multi_round(self, requests: list[Instance]):
        raise NotImplementedError("molmo2 does not implement multi-round generation")
