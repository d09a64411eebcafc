"""Building and studying the CAIT dataset ("Seeing vs. Believing").

  quality.py    cait-quality: NIQE, BRISQUE and CLIP caption alignment of CAIT beside other datasets (Tables 9-10)
  split.py      the recorded 60/40 train / held-out split, stratified by domain (Section 5.2)
  lora.py       LoRA fine-tuning of a Qwen2.5-VL on the training part, vision tower frozen, and the merged model
  heldout.py    the held-out evaluation through lmms-eval's `cait` task, before and after, and Table 8
  construction/ cait-build: the construction pipeline (Section 3.2, Tables 19-22), resumable stages over a folder
  cli.py        the console scripts `cait-quality`, `cait-lora` and `cait-build` (also `python -m cait_dataset
                quality|lora|build`)

The CAIT folder format is lmms_eval_tasks/cait.py's. Heavy libraries (torch, transformers, peft, pyiqa,
scikit-learn, openai, google-genai, diffusers) are imported inside the functions that use them.
"""
