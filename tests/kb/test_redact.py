from __future__ import annotations

from kb.redact import redact

PLANTED = {
    "wandb": "export WANDB_API_KEY=3f9c1ad07e2b4c5d8e9f0a1b2c3d4e5f6a7b8c9d",
    "hf": "token = hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "openai": "OPENAI key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123",
    "aws": "aws_access_key_id AKIAIOSFODNN7EXAMPLE aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "bearer": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdefghijklmnop",
    "url": "git clone https://alice:s3cretPassw0rd@git.example.com/repo.git",
}
SECRETS = [
    "3f9c1ad07e2b4c5d8e9f0a1b2c3d4e5f6a7b8c9d",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "eyJhbGciOiJIUzI1NiJ9abcdefghijklmnop",
    "s3cretPassw0rd",
]


def test_every_planted_secret_is_removed_and_counted():
    out = redact("\n".join(PLANTED.values()))
    for secret in SECRETS:
        assert secret not in out.text
    assert out.count >= 7
    assert "git.example.com/repo.git" in out.text and "alice:[REDACTED:password]@" in out.text


def test_ordinary_log_text_is_left_alone():
    log = (
        "ValueError: max_tokens must be at least 1, got -3173.\n"
        "actor_rollout_ref.rollout.gpu_memory_utilization=0.4 tokenizer: None\n"
        "export WANDB_API_KEY=$WANDB_KEY\n"
    )
    out = redact(log)
    assert out.text == log and out.count == 0


def test_hosts_and_ips_are_masked_only_when_asked():
    line = "NCCL INFO Bootstrap : Using eth0:10.236.184.4<0> on node gpu617.cluster"
    assert redact(line).text == line
    masked = redact(line, mask_hosts=True).text
    assert "10.236.184.4" not in masked and "gpu617.cluster" not in masked
