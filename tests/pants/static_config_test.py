from trunchbull_pants.static_config import config_entrypoints, read_static_config


def test_reads_literal_config_with_comments_and_trailing_commas() -> None:
    text = """
    // a comment
    import type { Config } from "trunchbull"
    export default {
      protocolVersion: 1,
      title: 'Support quality', /* block */
      "version": "1.0.0",
      evals: ["evals/refunds.ts", "./evals/b.ts",],
      tools: [],
    } satisfies Config
    """
    assert read_static_config(text) == {
        "protocolVersion": 1,
        "title": "Support quality",
        "version": "1.0.0",
        "evals": ["evals/refunds.ts", "./evals/b.ts"],
        "tools": [],
    }
    assert config_entrypoints(text) == (["evals/refunds.ts", "evals/b.ts"], [])


def test_const_then_export_default() -> None:
    text = "const config = { protocolVersion: 1, evals: ['e/a.ts'] } as const;\nexport default config\n"
    assert config_entrypoints(text) == (["e/a.ts"], None)


def test_unreadable_configs_fall_back_to_discovery() -> None:
    assert config_entrypoints("export default makeConfig()") == (None, None)
    assert config_entrypoints("export default { evals: [`${x}.ts`] }") == (None, None)
    assert config_entrypoints("export default { protocolVersion: 1 }") == (None, None)
    assert config_entrypoints("") == (None, None)
