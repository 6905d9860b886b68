"""Run a shimmed evaluation image the way grand-challenge.org runs an evaluation, against a moto S3 on loopback.

    .venv-shim/bin/python scripts/sagemaker-shim/run.py --image TAG --input DIR --ground-truth TARBALL
        --output DIR [--max-memory-mb N] [--time-limit S] [--env KEY=VALUE ...]

Called by ``./test-run.sh --shim`` (which builds the image and the tarball); runs in .venv-shim (boto3, moto).
What the platform does, read from comic/grand-challenge.org (components/backends/base.py, Executor: the
staging, invocation.json, invocation_environment, the result key; amazon_sagemaker_training.py: the
container arguments; amazon_sagemaker_base.py and backends/utils.py: how the result and the logs are read)
and DIAGNijmegen/rse-sagemaker-shim (sagemaker_shim/models.py) -- reimplemented here, not copied:

- job id ``evaluation-evaluation-<uuid>``; every input (each file of the input folder at its relative
  path: predictions.json or the prediction file, every algorithm output at ``<job pk>/output/...``, plus the
  ``inputs.json`` the platform always adds) is put in the inputs bucket under ``/io/evaluation/evaluation/<uuid>/``
  and listed in ``/invocations/.../invocation.json`` (``pk, inputs[relative_path, bucket_name, bucket_key,
  decompress], output_bucket_name, output_prefix, timeout``);
- the ground-truth tarball goes to ``/auxiliary-data/.../ground-truth.tar.gz``, named by
  ``GRAND_CHALLENGE_COMPONENT_GROUND_TRUTH``; the memory limit goes in ``GRAND_CHALLENGE_COMPONENT_MAX_MEMORY_MB``;
- the API method is the image's label ``org.grand-challenge.api-method`` (``exec`` when absent), read as the
  platform reads it at upload (components/tasks.py, ``_get_image_api_method``) and passed in
  ``GRAND_CHALLENGE_COMPONENT_API_METHOD``: in ``exec`` the shim runs the image's command once; in ``invoke``
  it starts it once as a server and calls ``POST /invoke`` on it (evaluation/platform/invoke.py);
- the container runs ``invoke --file s3://<inputs>/<invocation key>`` (the shim's command, in either method);
- read back: ``<output_prefix>.sagemaker_shim/inference_result.json`` (the return code; the platform fails the
  job on non-zero and shows the last non-empty line of the process's stderr, taken from the shim's structured
  logs: ``internal: false``, ``source: stderr``) and the uploaded outputs (metrics.json).

Writes into --output: metrics.json when it was uploaded, ``sagemaker-shim.json`` (a summary of what the
platform would read) and ``sagemaker-shim.log`` (the container's structured log). Prints the participant's
stderr lines to stderr (so the last line is what the platform shows) and exits with the return code in
inference_result.json (2 when the run gave no result at all).
"""

from __future__ import annotations

import argparse
import json
import logging
import secrets
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import boto3
from moto.server import ThreadedMotoServer

INPUTS_BUCKET = "grand-challenge-components-inputs"
OUTPUTS_BUCKET = "grand-challenge-components-outputs"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "eu-west-1"}
# the platform's SageMaker instances have 1 GB more than the limit it passes (amazon_sagemaker_base._max_memory_mb)
SYSTEM_RESERVE_MB = 1024
API_METHOD_LABEL = "org.grand-challenge.api-method"
API_METHODS = ("exec", "invoke")


def api_method(image: str) -> str:
    """The image's API method as the platform reads it when the image is uploaded: the label's key and value
    compared without case, quotes and surrounding spaces; ``exec`` without the label; any other value refused."""
    inspect = subprocess.run(["docker", "image", "inspect", "--format", "{{json .Config.Labels}}", image],
                             capture_output=True, text=True, check=True)  # fmt: skip
    for key, value in (json.loads(inspect.stdout) or {}).items():
        if key.strip().lower() == API_METHOD_LABEL:
            method = value.lower().replace('"', "").replace("'", "").strip()
            if method not in API_METHODS:
                raise SystemExit(f"{image}: the label {API_METHOD_LABEL} must be one of {API_METHODS}, not {value!r}")
            return method
    return "exec"


def free_port() -> int:
    """A port free on this machine's loopback, for the invoke server: the containers share the host's network
    here (``--network host``), so concurrent runs cannot all use the platform's 4743."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def inputs_json(input_dir: Path) -> list[dict]:
    """The serialised component interface values the platform always stages as inputs.json: for an
    evaluation, the one submission value (predictions.json, or the prediction file)."""
    if (input_dir / "predictions.json").is_file():
        value = json.loads((input_dir / "predictions.json").read_text(encoding="utf-8"))
        interface = {"slug": "predictions-json-file", "relative_path": "predictions.json", "kind": "Anything"}
        return [{"interface": interface, "value": value, "file": None, "image": None}]
    files = sorted(path.name for path in input_dir.iterdir() if path.is_file())
    return [
        {"interface": {"slug": "predictions-file", "relative_path": name, "kind": "File"}, "value": None,
         "file": f"https://grand-challenge.org/media/{name}", "image": None}
        for name in files
    ]  # fmt: skip


def structured_log_lines(text: str) -> list[dict]:
    """The shim's JSON log records (one per line; anything else is ignored, as the platform does)."""
    records = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "log" in record:
            records.append(record)
    return records


def last_non_empty(lines: list[str]) -> str | None:
    """What the platform shows the participant: the last non-empty line (backends/utils.user_error)."""
    for line in reversed(lines):
        if line.strip():
            return line.strip()
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", required=True)
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--ground-truth", type=Path, required=True, help="the phase's ground-truth tarball")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--max-memory-mb", type=int, default=7 * 1024, help="default: an 8 GB instance")
    parser.add_argument("--time-limit", type=int, default=3600, help="the phase's time limit (s)")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="extra container env")
    arguments = parser.parse_args(argv)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request log

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        _, port = server.get_host_and_port()
        endpoint = f"http://127.0.0.1:{port}"
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name=CREDENTIALS["AWS_DEFAULT_REGION"],
                          aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])  # fmt: skip
        for bucket in (INPUTS_BUCKET, OUTPUTS_BUCKET):
            s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})

        job = f"{uuid.uuid4()}-00"  # the evaluation's pk and attempt
        job_id = f"evaluation-evaluation-{job}"
        io_prefix = f"/io/evaluation/evaluation/{job}"
        invocation_key = f"/invocations/evaluation/evaluation/{job}/invocation.json"
        ground_truth_key = f"/auxiliary-data/evaluation/evaluation/{job}/ground-truth.tar.gz"

        inputs = []
        staged = {path.relative_to(arguments.input).as_posix(): path.read_bytes()
                  for path in sorted(arguments.input.rglob("*")) if path.is_file()}  # fmt: skip
        staged["inputs.json"] = json.dumps(inputs_json(arguments.input)).encode()
        for relative_path, content in staged.items():
            key = f"{io_prefix}/{relative_path}"
            s3.put_object(Bucket=INPUTS_BUCKET, Key=key, Body=content)
            inputs.append({"relative_path": relative_path, "bucket_name": INPUTS_BUCKET, "bucket_key": key,
                           "decompress": False})  # fmt: skip
        s3.put_object(Bucket=INPUTS_BUCKET, Key=ground_truth_key, Body=arguments.ground_truth.read_bytes())
        invocation = [{"pk": job_id, "inputs": inputs, "output_bucket_name": OUTPUTS_BUCKET,
                       "output_prefix": io_prefix, "timeout": f"PT{arguments.time_limit}S"}]  # fmt: skip
        s3.put_object(Bucket=INPUTS_BUCKET, Key=invocation_key, Body=json.dumps(invocation).encode())

        method = api_method(arguments.image)
        # the shim calls the server at GRAND_CHALLENGE_COMPONENT_USER_WEBSERVER_PORT; the server, which is not
        # given GRAND_CHALLENGE_* variables, listens at EVALUATION_INVOKE_PORT
        port_env = {}
        if method == "invoke":
            port = str(free_port())
            port_env = {"GRAND_CHALLENGE_COMPONENT_USER_WEBSERVER_PORT": port, "EVALUATION_INVOKE_PORT": port}
        environment = {
            # backends/base.py Executor.invocation_environment and its SageMaker training test
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
            "no_proxy": "amazonaws.com",
            "GRAND_CHALLENGE_COMPONENT_MAX_MEMORY_MB": str(arguments.max_memory_mb),
            "GRAND_CHALLENGE_COMPONENT_SIGNING_KEY_HEX": secrets.token_hex(16),
            "GRAND_CHALLENGE_COMPONENT_API_METHOD": method,
            "GRAND_CHALLENGE_COMPONENT_GROUND_TRUTH": f"s3://{INPUTS_BUCKET}/{ground_truth_key}",
            "GRAND_CHALLENGE_COMPONENT_RUNTIME_OUTPUT_BUCKET_NAME": OUTPUTS_BUCKET,
            "GRAND_CHALLENGE_COMPONENT_RUNTIME_OUTPUT_PREFIX": io_prefix,
            # the platform's settings.AWS_S3_ENDPOINT_URL, and credentials (on SageMaker: the job's role)
            "AWS_S3_ENDPOINT_URL": endpoint,
            **CREDENTIALS,
            **port_env,
            **dict(item.split("=", 1) for item in arguments.env),
        }
        command = ["docker", "run", "--rm", "--platform=linux/amd64",
                   # the host's network namespace, only so that the shim reaches moto on this machine's
                   # loopback (the engine here runs without iptables, so a bridge cannot reach the host);
                   # on the platform the container reaches S3 through its VPC
                   "--network", "host",
                   # the instance's memory: the limit plus the platform's 1 GB reserve; the limit that
                   # matters is the shim's RLIMIT_DATA on every process
                   f"--memory={arguments.max_memory_mb + SYSTEM_RESERVE_MB}m",
                   f"--memory-swap={arguments.max_memory_mb + SYSTEM_RESERVE_MB}m",
                   *(f"--env={key}={value}" for key, value in environment.items()),
                   arguments.image, "invoke", "--file", f"s3://{INPUTS_BUCKET}/{invocation_key}"]  # fmt: skip
        run = subprocess.run(command, capture_output=True, text=True, timeout=arguments.time_limit + 600)

        arguments.output.mkdir(parents=True, exist_ok=True)
        (arguments.output / "sagemaker-shim.log").write_text(run.stdout + run.stderr, encoding="utf-8")
        records = structured_log_lines(run.stdout + "\n" + run.stderr)
        participant_stderr = [r["log"] for r in records if r.get("internal") is False and r.get("source") == "stderr"]

        prefix = f"{io_prefix}/"
        listed = s3.list_objects_v2(Bucket=OUTPUTS_BUCKET, Prefix=prefix).get("Contents", [])
        uploaded = sorted(item["Key"][len(prefix) :] for item in listed)
        shim_results = {
            name: json.loads(s3.get_object(Bucket=OUTPUTS_BUCKET, Key=f"{prefix}.sagemaker_shim/{name}")["Body"].read())
            for name in ("runtime_setup_result.json", "inference_result.json")
            if f".sagemaker_shim/{name}" in uploaded
        }
        setup, result = shim_results.get("runtime_setup_result.json"), shim_results.get("inference_result.json")
        metrics = arguments.output / "metrics.json"
        metrics.unlink(missing_ok=True)
        if "metrics.json" in uploaded:
            s3.download_file(OUTPUTS_BUCKET, f"{prefix}metrics.json", str(metrics))
        summary = {
            "job": job_id,
            "api_method": method,
            "container_exit_code": run.returncode,
            "runtime_setup_return_code": None if setup is None else setup["return_code"],
            "return_code": None if result is None else result["return_code"],
            "pk_matches": None if result is None else result["pk"] == job_id,
            "user_safe_error_message": None if result is None else result["user_safe_error_message"],
            "last_stderr_line": None if result is None else last_non_empty(result["user_process_last_stderr_lines"]),
            "shown_to_participant": last_non_empty(participant_stderr),
            "uploaded": [name for name in uploaded if not name.startswith(".sagemaker_shim/")],
            "sagemaker_shim_version": None if result is None else result["sagemaker_shim_version"],
        }
        (arguments.output / "sagemaker-shim.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        for line in participant_stderr:
            print(line.rstrip("\n"), file=sys.stderr)
        if result is None:
            print(f"sagemaker-shim run: no inference_result.json (container exit {run.returncode}); see "
                  f"{arguments.output / 'sagemaker-shim.log'}", file=sys.stderr)  # fmt: skip
            return 2
        return int(result["return_code"])
    finally:
        server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
