"""Hand-checked responses graded through `trunchbull grade` on the built releases, each with the
outcome its benchmark's reference scorer gives the same response (Inspect AI 0.3.285's
match(numeric=True) for GSM8K, its multiple_choice parsing and choice() for MMLU, bfcl-eval
2026.3.23's AST checker for BFCL; bench/agreement.py compares thousands more)."""

from __future__ import annotations

import json


def call(name: str, arguments: dict | str, step: int | None = None) -> dict:
    """A tool call as OpenAI's chat completions return it (arguments as JSON text)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    raw = {"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": text}}
    return raw if step is None else {**raw, "step": step}


# (case, output, passes); the expected answers: gsm8k.0 18, .1 3, .2 70000, .3 540, .4 20, .146 2125
GSM8K = [
    ("gsm8k.0", "16 - 3 - 4 = 9 eggs, 9 * 2 = 18 dollars.\nANSWER: 18", True),
    ("gsm8k.1", "ANSWER: $3.00", True),
    ("gsm8k.2", "ANSWER: 70,000 dollars", True),
    ("gsm8k.3", "The answer is 540.\n\nLet me know if you need anything else!", True),
    ("gsm8k.4", "So he runs 4 * 6 = 21 miles.\nANSWER: 21", False),
    ("gsm8k.0", "ANSWER: 18\nThat is 2 dollars per egg.", False),  # the last number counts
    ("gsm8k.1", "", False),
    ("gsm8k.146", "ANSWER: 2,125", True),  # the dataset writes 2,125
    ("gsm8k.fewshot.146", "ANSWER: 2125.0", True),
    ("gsm8k.fewshot.0", " She makes 9 * 2 = $18 every day at the farmer’s market. So the answer is 18.", True),
]


def test_gsm8k_outputs_grade_as_inspects_numeric_match(grade_all):
    results = grade_all("gsm8k", [(case, {"output": output}) for case, output, _ in GSM8K])
    for (case, output, passes), result in zip(GSM8K, results):
        assert result["evaluator"] == "gsm8k"
        assert (result["outcome"] == "pass") is passes, (case, output, result["message"])


# mmlu.abstract_algebra.<n>'s answers: 0 B, 1 C, 2 D, 3 B, 4 B, 5 A
MMLU = [
    (0, "ANSWER: B", True),
    (1, "answer: c.", True),
    (2, "ANSWER: (D)", True),
    (3, "ANSWER: $B$", True),
    (4, "The field has degree 4, so:\nANSWER: **B**", True),
    (5, "ANSWER: A,", True),
    (0, "ANSWER: A", False),
    (1, "ANSWER: A, C", False),
    (2, "D", False),  # no ANSWER: line, nothing chosen
    (3, "The answer is B.", False),
    (4, "", False),
]


def test_mmlu_letters_grade_as_inspects_choice_scorer(grade_all):
    results = grade_all("mmlu", [(f"mmlu.abstract_algebra.{n}", {"output": out}) for n, out, _ in MMLU])
    for (n, output, passes), result in zip(MMLU, results):
        assert result["evaluator"] == "custom"
        assert (result["outcome"] == "pass") is passes, (n, output, result["message"])


BFCL = [  # (case, tool calls, passes)
    ("simple_python_0", [call("calculate_triangle_area", {"base": 10, "height": 5})], True),
    ("simple_python_2", [call("math_hypot", {"x": 4, "y": 5, "z": 0})], True),  # an optional value given
    ("simple_python_3", [call("algebra_quadratic_roots", {"a": 1, "b": -3})], False),  # required c missing
    ("simple_python_4", [call("solve_quadratic_equation", {"a": "2", "b": 6, "c": 5})], False),  # wrong type
    ("simple_python_1", [call("math_factorial", {"number": 5.0})], False),  # 5.0 is a float
    ("simple_python_0", [call("calculate_triangle_area", {"base": 10, "height": 5, "color": "red"})], False),
    ("simple_python_2", [call("math_sqrt", {"x": 4, "y": 5})], False),  # wrong function
    ("simple_python_3", [], False),  # no call
    ("simple_python_1", [call("math_factorial", {"number": 5})], True),  # BFCL's math.factorial, offered with `_`
    # a later step's calls are not graded: BFCL grades the model's one reply
    (
        "simple_python_4",
        [call("solve_quadratic_equation", {"a": 2, "b": 6, "c": 5}, step=0), call("x", {}, step=1)],
        True,
    ),
    ("simple_python_0", [call("calculate_triangle_area", {"base": 10, "height": 5})] * 2, False),  # an extra call
    (
        "parallel_0",
        [
            call("spotify_play", {"artist": "Maroon 5", "duration": 15}),
            call("spotify_play", {"artist": "taylor swift", "duration": 20}),
        ],
        True,
    ),
    ("parallel_0", [call("spotify_play", {"artist": "Taylor Swift", "duration": 20})], False),  # one call missing
    (
        "parallel_2",
        [
            call("calculate_resistance", {"length": 5, "area": 0.01, "resistivity": "aluminum"}),
            call("calculate_resistance", {"length": 5, "area": 0.01}),
        ],
        True,
    ),
    ("multiple_0", [call("triangle_properties_get", {"side1": 5, "side2": 4, "side3": 3})], True),
    ("multiple_0", [call("triangle_properties_get", {"side1": 5, "side2": 4, "side3": 3, "get_area": False})], False),
    (
        "simple_java_1",
        [
            call(
                "SQLCompletionAnalyzer_makeProposalsFromObject",
                {
                    "object": "Customers",
                    "useShortName": "true",
                    "params": 'new HashMap<String, Object>() {{ put("limit", 50); put("schemaFilter", "public"); }}',
                },
            )
        ],
        True,
    ),
    (
        "simple_java_1",
        [
            call(
                "SQLCompletionAnalyzer_makeProposalsFromObject",
                {
                    "object": "Customers",
                    "useShortName": "true",
                    "params": 'new HashMap<String, Object>() {{ put("limit", "50"); put("schemaFilter", "public"); }}',
                },
            )
        ],
        False,
    ),
    (
        "simple_java_1",  # Java values are source text
        [
            call(
                "SQLCompletionAnalyzer_makeProposalsFromObject",
                {"object": "Customers", "useShortName": True, "params": "new HashMap<>()"},
            )
        ],
        False,
    ),
    (
        "simple_javascript_2",
        [
            call(
                "extractLastTransactionId",
                {
                    "filepath": "'/var/log/db.log'",
                    "status": "['completed', 'failed']",
                    "encoding": "'utf-8'",
                    "processFunction": "processFunction",
                },
            )
        ],
        True,
    ),
    (
        "simple_javascript_2",
        [
            call(
                "extractLastTransactionId",
                {
                    "filepath": "'/var/log/db.log'",
                    "status": "['failed', 'completed']",
                    "encoding": "'utf-8'",
                    "processFunction": "processFunction",
                },
            )
        ],
        False,
    ),
    ("irrelevance_0", [], True),
    ("irrelevance_1", [call("determine_body_mass_index", {"weight": 70.0, "height": 1.8})], False),
    ("irrelevance_2", [call("determine_body_mass_index", "not json")], True),  # does not decode: no call
]


def test_bfcl_calls_grade_as_bfcls_ast_checker(grade_all):
    results = grade_all("bfcl", [(case, {"output": "", "toolCalls": calls}) for case, calls, _ in BFCL])
    for n, ((case, calls, passes), result) in enumerate(zip(BFCL, results)):
        assert result["evaluator"] == "custom" and result["outcome"] != "error", result
        assert (result["outcome"] == "pass") is passes, (n, case, calls, result["message"])
