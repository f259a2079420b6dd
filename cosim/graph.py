"""Dependency graph utilities: strongly connected components and ordering.

Nodes are integers ``0..n-1``; ``deps[i]`` lists the nodes that node ``i``
reads.  :func:`order_with_loops` returns the evaluation order as a list of
components in dependency order: a component of one node without a self-edge
is an ordinary node; anything else is an algebraic loop.
"""

from __future__ import annotations


def strongly_connected(deps: list[list[int]]) -> list[list[int]]:
    """Tarjan's algorithm (iterative); components come out dependencies first."""
    n = len(deps)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    comps: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] != -1:
            continue
        work = [(root, 0)]
        while work:
            v, i = work[-1]
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            recurse = False
            while i < len(deps[v]):
                w = deps[v][i]
                i += 1
                if index[w] == -1:
                    work[-1] = (v, i)
                    work.append((w, 0))
                    recurse = True
                    break
                if on_stack[w]:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def order_with_loops(deps: list[list[int]]) -> list[list[int]]:
    """Components in a valid evaluation order (deterministic for a given input)."""
    return strongly_connected(deps)


def is_loop(comp: list[int], deps: list[list[int]]) -> bool:
    return len(comp) > 1 or comp[0] in deps[comp[0]]


def find_cycle(comp: list[int], deps: list[list[int]]) -> list[int]:
    """One cycle inside a strongly connected component, as a node list."""
    members = set(comp)
    start = comp[0]
    # BFS from start following deps inside the component back to start
    prev = {start: None}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in deps[v]:
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path))
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return [start]
