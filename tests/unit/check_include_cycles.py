#!/usr/bin/env python3
"""No include cycles between ward's modules (issue 15): a TAP check that `make test` and
`make test-unit` run beside the C unit tests.

A module is a file name without its extension in one directory (runtime/lib/pod.c and
runtime/lib/pod.h are the module runtime/lib/pod). Module A depends on module B when A's .c
or .h has `#include "B.h"` (quoted includes, resolved as the Makefile's -iquote paths do:
the including file's directory, then runtime/lib, shim, gpu-hooks). A cycle in that graph
(pod.c reads states, state.h holds a pod) is a failure that names the modules and the
includes that close it. The graph covers runtime/lib, runtime (the CLI), shim, hooks and
gpu-hooks.

Usage: check_include_cycles.py [ROOT]   (default: the tree this file is in)
"""
import os
import re
import sys

DIRS = ["runtime/lib", "runtime", "shim", "hooks", "gpu-hooks"]
QUOTE_PATH = ["runtime/lib", "shim", "gpu-hooks"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def graph(root):
    """module -> {module it includes: the file and header that make the edge}"""
    edges = {}
    for d in DIRS:
        path = os.path.join(root, d)
        if not os.path.isdir(path):
            continue
        for f in sorted(os.listdir(path)):
            if not f.endswith((".c", ".h")):
                continue
            mod = d + "/" + f[:-2]
            edges.setdefault(mod, {})
            with open(os.path.join(path, f), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for h in INCLUDE.findall(text):
                for sd in [d] + QUOTE_PATH:
                    if os.path.isfile(os.path.join(root, sd, h)):
                        to = sd + "/" + os.path.splitext(h)[0]
                        if to != mod:
                            edges[mod].setdefault(to, "%s/%s includes \"%s\"" % (d, f, h))
                        break
    return edges


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def one_cycle(edges, comp):
    """A path around the component, with the include of each step."""
    members = set(comp)
    path, seen, v = [comp[0]], {comp[0]}, comp[0]
    while True:
        nxt = sorted(w for w in edges[v] if w in members)
        back = [w for w in nxt if w == comp[0]]
        step = back[0] if back and len(path) > 1 else next((w for w in nxt if w not in seen), None)
        if step is None:
            step = back[0] if back else nxt[0]
        path.append(step)
        if step == comp[0] or step in seen:
            break
        seen.add(step)
        v = step
    return ["%s -> %s (%s)" % (a, b, edges[a][b]) for a, b in zip(path, path[1:])]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    edges = graph(root)
    n = 0
    print("1..2")
    # the check itself finds a cycle it is shown
    probe = {"a": {"b": "a.c includes \"b.h\""}, "b": {"a": "b.c includes \"a.h\""}, "c": {"a": "c.c includes \"a.h\""}}
    n += 1
    found = cycles(probe)
    print(("ok" if found == [["a", "b"]] else "not ok") + " %d - the check finds a two-module cycle" % n)
    n += 1
    found = cycles(edges)
    if not edges:
        print("not ok %d - no sources under %s" % (n, root))
        return 1
    if not found:
        print("ok %d - no include cycle between the %d modules of %s" % (n, len(edges), ", ".join(DIRS)))
        return 0
    print("not ok %d - include cycles between modules" % n)
    for comp in found:
        print("# cycle: " + " <-> ".join(comp))
        for step in one_cycle(edges, comp):
            print("#   " + step)
    return 1


if __name__ == "__main__":
    sys.exit(main())
