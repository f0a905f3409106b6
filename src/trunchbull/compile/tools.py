"""Tool modules (SPEC §3.8): a named `tools` export of AI SDK tools."""

from __future__ import annotations

from dataclasses import dataclass

from trunchbull.common.diagnostics import Diagnostics
from trunchbull.common.ids import tool_name_problem
from trunchbull.compile.locate import find_key
from trunchbull.compile.modules import ModuleReport


@dataclass
class CompiledTool:
    name: str
    description: str
    input_schema: dict
    module: str
    bundle_sha: str


def compile_tool_module(report: ModuleReport, root, diags: Diagnostics) -> list[CompiledTool]:
    inspection = report.inspection or {}
    if "tools" not in inspection and "toolsProblem" not in inspection:
        diags.error(
            "tool-module-export",
            "a tool module must export a named `tools` object",
            file=report.path,
            hint="export const tools = { my_tool: tool({ description, inputSchema, execute }) }; "
            "move helper modules out of tools/, or list tool modules explicitly in benchmark.config",
        )
        return []
    if "toolsProblem" in inspection:
        diags.error(
            "tool-module-export",
            inspection["toolsProblem"],
            file=report.path,
            hint="export const tools = { my_tool: tool({ … }) }",
        )
        return []
    compiled = []
    for tool in inspection["tools"]:
        name = tool["name"]
        line, col = find_key(root / report.path, name)
        problem = tool_name_problem(name)
        if problem:
            diags.error(
                "tool-name",
                problem,
                file=report.path,
                line=line,
                col=col,
                hint="tool names are function names for model APIs: letters, digits, '_' and '-'",
            )
        for issue in tool["problems"]:
            diags.error(
                "tool-invalid",
                f"tool {name!r} {issue}",
                file=report.path,
                line=line,
                col=col,
                hint="each tool needs a non-empty description, an inputSchema and an execute function (AI SDK tool())",
            )
        description = tool.get("description")
        if isinstance(description, str) and not description.strip():
            diags.error(
                "tool-invalid",
                f"tool {name!r} has an empty description",
                file=report.path,
                line=line,
                col=col,
                hint="describe what the tool does; models read it",
            )
        if problem or tool["problems"] or not (description or "").strip():
            continue
        compiled.append(CompiledTool(name, description, tool["inputSchema"], report.path, report.bundle_sha or ""))
    return compiled
