#!/usr/bin/env bash
# Rewrites tests/data/chat_formats.jsonl from llama.cpp itself: builds
# scripts/llama-chat-reference.c against a llama.cpp build outside the tree
# and asks llama_chat_apply_template for every family name gguf-run formats and
# for template texts written to trip each of llama.cpp's detection rules.
#   LLAMA_CPP=/path/to/llama.cpp (built in LLAMA_CPP/build) scripts/chat-formats-reference.sh
set -euo pipefail
: "${LLAMA_CPP:?set LLAMA_CPP to a llama.cpp source tree built in LLAMA_CPP/build}"
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc "$here/scripts/llama-chat-reference.c" -I"$LLAMA_CPP/include" -I"$LLAMA_CPP/ggml/include" \
  -L"$LLAMA_CPP/build/bin" -lllama -Wl,-rpath,"$LLAMA_CPP/build/bin" -o "$tmp/ref"
"$tmp/ref" "  What is the capital of France?  " \
  chatml llama3 gemma llama2 llama2-sys llama2-sys-bos llama2-sys-strip mistral-v1 mistral-v3 mistral-v3-tekken \
  mistral-v7 mistral-v7-tekken phi3 zephyr granite granite-4.0 granite-4.1 gpt-oss dots1 phi4 smolvlm falcon3 \
  glmedge chatglm4 monarch orion openchat vicuna vicuna-orca deepseek deepseek2 deepseek3 kimi-k2 \
  "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}{% endfor %}" \
  "{{ bos_token }}{% for m in messages %}{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\n\n' + m['content'] | trim + '<|eot_id|>' }}{% endfor %}" \
  "{{ bos_token }}{% for m in messages %}{{ '<start_of_turn>' + m['role'] + '\n' + m['content'] | trim + '<end_of_turn>\n' }}{% endfor %}" \
  "{% for m in messages %}{{ '[INST] ' + m['content'] + ' [/INST]' }}{% endfor %}" \
  "{% for m in messages %}{% if m['role'] == 'system' %}{{ '<<SYS>>\n' + m['content'] + '\n<</SYS>>\n\n' }}{% else %}{{ '[INST] ' + m['content'] + ' [/INST]' }}{% endif %}{% endfor %}" \
  "{% for m in messages %}{{ bos_token + '[INST] ' + m['content'].strip() + ' [/INST]' }}{% endfor %}" \
  "{% for m in messages %}{{ bos_token + '[INST] ' + m['content'] + ' [/INST]' }}{% endfor %}" \
  "{{ bos_token }}{% if system_message %}{{ '[SYSTEM_PROMPT]' + system_message + '[/SYSTEM_PROMPT]' }}{% endif %}{% for m in messages %}{{ '[INST]' + m['content'] + '[/INST]' }}{% endfor %}" \
  "{{ bos_token }}{% for m in messages %}{{ ' [INST] ' + system_message + m['content'] + ' [/INST]' }}{% endfor %}" \
  "{{ bos_token }}{% for m in messages %}{% if tools %}[AVAILABLE_TOOLS]{% endif %}{{ '[INST] ' + m['content'] + '[/INST]' }}{% endfor %}" \
  "{{ bos_token }}{% for m in messages %}{% if tools %}[AVAILABLE_TOOLS]{% endif %}{{ \"[INST]\" + m['content'] + \"[/INST]\" }}{% endfor %}" \
  "{% for m in messages %}{{ '<|' + m['role'] + '|>\n' + m['content'] + '<|end|>\n' }}{% endfor %}{{ '<|assistant|>\n' }}" \
  "{% for m in messages %}{{ '<|user|>\n' + m['content'] + '<|endoftext|>\n' }}{% endfor %}" \
  "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '<|im_sep|>' + m['content'] + '<|im_end|>' }}{% endfor %}" \
  "{%- for m in messages %}{{- '<|start_of_role|>' + m['role'] + '<|end_of_role|>' + m['content'] + '<|end_of_text|>\n' }}{%- endfor %}" \
  "{%- if tools %}<tools>{% endif %}{%- set g4_default_system_message = 'x' %}{%- for m in messages %}{{- '<|start_of_role|>' + m['role'] + '<|end_of_role|>' + m['content'] + '<|end_of_text|>\n' }}{%- endfor %}" \
  "{%- if tools %}<tool_call>{% endif %}{%- for m in messages %}{{- '<|start_of_role|>' + m['role'] + '<|end_of_role|>' + m['content'] + '<|end_of_text|>\n' }}{%- endfor %}" \
  "{%- for m in messages %}{{- '<|start|>' + m['role'] + '<|message|>' + m['content'] + '<|end|>' }}{%- endfor %}{{- '<|start|>assistant<|channel|>final<|message|>' }}" \
  "{%- for m in messages %}{{- '<|header_start|>' + m['role'] + '<|header_end|>\n\n' + m['content'] + '<|eot|>' }}{%- endfor %}" \
  "{%- for m in messages %}{{- '<｜User｜>' + m['content'] + '<｜Assistant｜>' + '<｜end▁of▁sentence｜>' }}{%- endfor %}" \
  "{%- for m in messages %}{{- '[|system|][|endofturn|][|tool|][|assistant|]' + m['content'] }}{%- endfor %}" \
  "{%- for m in messages %}{{- '[|system|][|endofturn|][|assistant|]' + m['content'] }}{%- endfor %}" \
  "{%- for m in messages %}{{- '<|im_assistant|>assistant<|im_middle|>' + m['content'] }}{%- endfor %}" \
  "{%- for m in messages %}{{- '<|endofuserprompt|>' + m['content'] }}{%- endfor %}" \
  "{%- for m in messages %}{{- '<|extra_0|>' + m['content'] + '<|extra_4|>' }}{%- endfor %}" \
  "{%- for m in messages %}{{- '<seed:bos>' + m['role'] + m['content'] }}{%- endfor %}" \
  "{%- for m in messages %}{{- '<|begin|>' + m['role'] + '<|content|>' + m['content'] + '<|end|>' }}{%- endfor %}" \
  "{%- for m in messages %}{{- '<role>ASSISTANT</role>' + 'HUMAN' }}{%- endfor %}" \
  "{%- for m in messages %}{{- '<role>ASSISTANT</role><role>HUMAN</role><|role_end|>' + m['content'] }}{%- endfor %}" \
  "[gMASK]<sop>{%- for m in messages %}{{- '<|' + m['role'] + '|>\n' + m['content'] }}{%- endfor %}{{- '<|assistant|>\n' }}" \
  "{% for m in messages %}{{ m['role'] + ': ' + m['content'] }}{% endfor %}" >"$here/tests/data/chat_formats.jsonl"
echo "chat-formats-reference: wrote tests/data/chat_formats.jsonl" >&2
