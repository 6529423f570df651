"""`cudalens rules`: the catalog and each rule's documentation page (what it does, why it matters,
example, fix), as the rule modules document them."""

from __future__ import annotations

import inspect

import click
from rich.console import Console
from rich.table import Table

from cudalens.cli._common import echo_json, format_option
from cudalens.errors import InputError


def register(group: click.Group) -> None:
    @group.command("rules")
    @click.argument("rule_id", required=False)
    @format_option
    def rules_cmd(rule_id, fmt):
        """List the guide's recommendations and which have a detector; RULE_ID prints its page."""
        from cudalens.rules.catalog import CATALOG
        from cudalens.rules.registry import load_all

        rules = load_all()
        if rule_id is None:
            rows = [{"id": i.id, "title": i.title, "section": i.section, "priority": i.priority.value,
                     "detector": i.id in rules, "layers": rules[i.id].layers if i.id in rules else None}
                    for i in CATALOG.values()]
            if fmt == "json":
                echo_json({"rules": rows, "implemented": sum(r["detector"] for r in rows), "catalog": len(rows)})
                return
            table = Table(title=f"{sum(r['detector'] for r in rows)} of {len(rows)} catalog items have a detector")
            for col in ("id", "priority", "section", "layers", "title"):
                table.add_column(col)
            for r in rows:
                table.add_row(r["id"], r["priority"], r["section"], r["layers"] or "-", r["title"],
                              style=None if r["detector"] else "dim")
            Console().print(table)
            return
        key = rule_id.upper()
        if key not in CATALOG:
            raise InputError(f"unknown rule {rule_id!r} (`cudalens rules` lists them)")
        item = CATALOG[key]
        spec = rules.get(key)
        page = inspect.cleandoc(spec.doc) if spec else "No detector yet: this item is in the catalog only."
        if fmt == "json":
            echo_json({"id": key, "title": item.title, "section": item.section, "priority": item.priority.value,
                       "layers": spec.layers if spec else None, "doc": page})
            return
        click.echo(f"{key}  {item.title}\n{item.section} · guide priority {item.priority.value}"
                   f"{' · evidence layers ' + spec.layers if spec else ''}\n\n{page}")
