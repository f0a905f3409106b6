"""The `run` command's arguments (SPEC §8), for the CLI's parser."""

from __future__ import annotations

from pathlib import Path


def add_run_parser(commands) -> None:
    from trunchbull.run.providers import model_help

    run = commands.add_parser(
        "run",
        help="run every case through a model with its tools, record, then grade",
        description="Send every case (x repeats) of a release to a model through the AI SDK, execute the case's "
        "tools when the model calls them, record each sample in RUN_DIR as it finishes, then grade "
        "them as `trunchbull grade` does. Resumable (--resume) and cached.",
    )
    run.add_argument("target", type=Path, help="a release (directory or .tar), or a benchmark root (built first)")
    run.add_argument(
        "--model",
        metavar="SPEC",
        help=model_help(),
    )
    run.add_argument(
        "-o", "--out", type=Path, required=True, metavar="RUN_DIR", help="the run directory (new, or --resume)"
    )
    endpoint = run.add_argument_group("endpoint and credentials")
    endpoint.add_argument(
        "--base-url", metavar="URL", help="the provider's API base URL (required for openai-compatible)"
    )
    endpoint.add_argument("--api-key-env", metavar="NAME", help="the environment variable holding the API key")
    add_judge_arguments(run)
    calls = run.add_argument_group("model call settings (passed only when given)")
    calls.add_argument("--temperature", type=float, metavar="T")
    calls.add_argument("--max-tokens", type=int, metavar="N")
    calls.add_argument("--top-p", type=float, metavar="P")
    calls.add_argument("--seed", type=int, metavar="N")
    limits = run.add_argument_group("limits")
    limits.add_argument(
        "--max-steps", type=int, metavar="N", help="model calls per sample in the tool loop (default 8)"
    )
    limits.add_argument(
        "--timeout", type=float, metavar="S", help="seconds per sample, tool loop included (default 300)"
    )
    limits.add_argument("--tool-timeout", type=float, metavar="S", help="seconds per tool call (default 30)")
    limits.add_argument(
        "--retries", type=int, metavar="N", help="retries of 429/408/409/5xx/connection errors (default 6)"
    )
    limits.add_argument("-j", "--concurrency", type=int, metavar="N", help="samples in flight (default 16)")
    limits.add_argument(
        "--max-response-bytes",
        type=int,
        metavar="N",
        help="a model's text (and a tool call's arguments) per step, in UTF-8 bytes; longer text is cut "
        "with a marker, larger arguments are a tool error (default 1048576)",
    )
    limits.add_argument(
        "--max-tool-result-bytes",
        type=int,
        metavar="N",
        help="a tool result's JSON, in bytes; a larger one is cut with a marker, for the model and the record "
        "(default 1048576)",
    )
    select = run.add_argument_group("which samples")
    select.add_argument("--eval", action="append", metavar="ID", help="only this eval (repeatable)")
    select.add_argument("--case", action="append", metavar="GLOB", help="only case IDs matching GLOB (repeatable)")
    select.add_argument("--limit", type=int, metavar="N", help="the first N cases after filtering")
    select.add_argument("--repeat", type=int, metavar="K", help="samples per case (default 1)")
    records = run.add_argument_group("records")
    records.add_argument("--resume", action="store_true", help="continue an interrupted RUN_DIR")
    records.add_argument(
        "--rerun-errors", action="store_true", help="with --resume: also re-run samples that ended in error"
    )
    records.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    batch = run.add_argument_group("batch mode (openai, anthropic, google)")
    batch.add_argument(
        "--batch",
        action="store_true",
        help="send the model calls through the provider's batch API (about half the price; results within "
        "24 hours); tool loops take one batch per step; kill-safe: --resume re-attaches to the live batches",
    )
    batch.add_argument(
        "--batch-poll", type=float, metavar="SECONDS", help="seconds between looks at the live batches (default 30)"
    )
    batch.add_argument(
        "--cancel-batches",
        action="store_true",
        help="with --resume: cancel the run's live batches, record what they finished, and stop",
    )
    costs = run.add_argument_group("costs and budgets")
    costs.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="TOML or JSON: model SPEC -> input, output, cachedInput (and batchInput, batchOutput, batchCachedInput) "
        "USD per million tokens (overrides the defaults)",
    )
    costs.add_argument(
        "--max-cost", type=float, metavar="USD", help="start no sample that could take the run past USD (exit 3)"
    )
    costs.add_argument(
        "--max-total-tokens",
        type=int,
        metavar="N",
        help="start no sample that could take the run past N tokens (exit 3)",
    )
    costs.add_argument(
        "--dry-run",
        action="store_true",
        help="print the samples planned, those cached, the estimated input tokens and cost; call and write nothing",
    )
    run.add_argument(
        "--fail-under", type=float, metavar="RATE", help="exit 1 when the overall pass rate is below RATE (0-1)"
    )
    run.add_argument("--json", action="store_true", help="print the summary as JSON")


def add_judge_arguments(parser, pairwise: bool = False) -> None:
    """The judge of model-graded kinds (`run` and `grade`), or of `compare`'s pairwise judging."""
    if pairwise:
        judge = parser.add_argument_group("pairwise judging (each case's two outputs, asked in both orders)")
        judge.add_argument(
            "--judge",
            action="append",
            metavar="SPEC",
            help="ask this judge model (a model SPEC, as --model) which output is better, for every case both "
            "runs answered; needs -o CMP_DIR",
        )
    else:
        judge = parser.add_argument_group("judge of model-graded evaluators (rubric, factuality)")
        judge.add_argument(
            "--judge",
            action="append",
            metavar="SPEC",
            help="the judge model (a model SPEC, as --model); given several times, a panel (the majority's "
            "verdict, the mean score); default: the one each spec pins",
        )
    judge.add_argument("--judge-base-url", metavar="URL", help="the judge provider's API base URL, as --base-url")
    judge.add_argument(
        "--judge-api-key-env", metavar="NAME", help="the environment variable holding the judge's API key"
    )
    judge.add_argument(
        "--judge-max-tokens", type=int, metavar="N", help="the most output tokens of one judge reply (default: none)"
    )
    judge.add_argument(
        "--allow-self-judge",
        action="store_true",
        help="let a model judge its own outputs (the run or comparison is marked self-judged)"
        if pairwise
        else "let the model under test judge its own outputs (the run is marked self-judged)",
    )
    if pairwise:
        judge.add_argument(
            "--rubric", metavar="TEXT", help="the criteria to compare the outputs on (default: MT-Bench's general ones)"
        )
        judge.add_argument(
            "-o", "--out", type=Path, metavar="CMP_DIR", help="the comparison directory (new, or this comparison's)"
        )
        judge.add_argument(
            "--rerun-errors", action="store_true", help="ask the judge again for the verdicts recorded in error"
        )
        judge.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
