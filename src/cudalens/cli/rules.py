"""`cudalens rules`: the catalog and each rule's documentation page (what it does, why it matters,
example, fix), as the rule modules document them."""

from __future__ import annotations

import inspect

import click
from rich.table import Table

from cudalens.cli._common import echo_json, format_option
from cudalens.errors import InputError
from cudalens.report.console import report_console


def register(group: click.Group) -> None:
    @group.command("rules")
    @click.argument("rule_id", required=False)
    @format_option
    def rules_cmd(rule_id, fmt):
        """List the guide's recommendations and which have a detector; RULE_ID prints its page."""
        from cudalens.rules.catalog import CATALOG
        from cudalens.rules.coverage import COVERAGE
        from cudalens.rules.registry import load_all

        rules = load_all()
        if rule_id is None:
            rows = []
            for i in CATALOG.values():
                cov = COVERAGE.get(i.id)
                coverage = ("rule" if i.id in rules else cov.kind if cov else "missing")
                rows.append({"id": i.id, "title": i.title, "section": i.section, "priority": i.priority.value,
                             "detector": i.id in rules, "layers": rules[i.id].layers if i.id in rules else None,
                             "coverage": coverage, "where": cov.where if cov and i.id not in rules else None})
            if fmt == "json":
                echo_json({"rules": rows, "implemented": sum(r["detector"] for r in rows), "catalog": len(rows),
                           "elsewhere": sum(r["coverage"] == "elsewhere" for r in rows),
                           "not_detectable": sum(r["coverage"] == "not detectable" for r in rows)})
                return
            n_rule = sum(r["detector"] for r in rows)
            n_else = sum(r["coverage"] == "elsewhere" for r in rows)
            n_not = sum(r["coverage"] == "not detectable" for r in rows)
            table = Table(title=f"{len(rows)} catalog items: {n_rule} with a rule, {n_else} established by another "
                                f"command, {n_not} not detectable from code (`cudalens rules ID` says why)")
            for col in ("id", "priority", "section", "coverage", "title"):
                table.add_column(col, overflow="fold")
            for r in rows:
                cov = (f"rule ({r['layers']})" if r["detector"] else
                       f"{r['coverage']}: {r['where']}" if r["coverage"] == "elsewhere" else r["coverage"])
                table.add_row(r["id"], r["priority"], r["section"], cov, r["title"],
                              style=None if r["detector"] else "dim")
            report_console().print(table)
            return
        key = rule_id.upper()
        if key not in CATALOG:
            raise InputError(f"unknown rule {rule_id!r} (`cudalens rules` lists them)")
        item = CATALOG[key]
        spec = rules.get(key)
        cov = COVERAGE.get(key)
        if spec:
            page = inspect.cleandoc(spec.doc)
        elif cov:
            page = (f"No rule detects this item ({cov.kind}"
                    + (f": {cov.where}" if cov.where != "-" else "") + f").\n\n{cov.page}")
        else:
            page = "No detector yet: this item is in the catalog only."
        if fmt == "json":
            echo_json({"id": key, "title": item.title, "section": item.section, "priority": item.priority.value,
                       "layers": spec.layers if spec else None, "doc": page})
            return
        click.echo(f"{key}  {item.title}\n{item.section} · guide priority {item.priority.value}"
                   f"{' · evidence layers ' + spec.layers if spec else ''}\n\n{page}")
