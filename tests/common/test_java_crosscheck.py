"""Cross-check the Java renderings against a real JVM when one is installed (skipped otherwise).

A small Java program prints ``Float.toString``/``Double.toString``, ``HashMap.toString``
and ``Instant``/``Timestamp`` strings for generated inputs; flott's renderers must
produce the same text. The JVM's major version selects the expected number style.
"""

from __future__ import annotations

import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from flott.common import Types
from flott.common.java_text import (
    java_double_to_string,
    java_float_to_string,
    java_instant_to_string,
    set_java_number_style,
)

pytestmark = pytest.mark.skipif(
    shutil.which("javac") is None or shutil.which("java") is None, reason="no JDK installed"
)

_JAVA = r"""
import java.io.*; import java.util.*;
public class Fmt { public static void main(String[] a) throws Exception {
  BufferedReader r = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
  PrintWriter w = new PrintWriter(new OutputStreamWriter(System.out, "UTF-8"));
  String l;
  while ((l = r.readLine()) != null) {
    String[] p = l.split(" ", -1);
    switch (p[0]) {
      case "N": { double d = Double.longBitsToDouble(Long.parseUnsignedLong(p[1], 16));
                  w.println(Double.toString(d) + " " + Float.toString((float) d)); break; }
      case "MS": { HashMap<String,Integer> m = new HashMap<>(p.length - 1);
                   for (int i = 1; i < p.length; i++) m.put(p[i], i); w.println(m); break; }
      case "MI": { HashMap<Integer,Integer> m = new HashMap<>(p.length - 1);
                   for (int i = 1; i < p.length; i++) m.put(Integer.parseInt(p[i]), i); w.println(m); break; }
      case "ML": { HashMap<Long,Integer> m = new HashMap<>(p.length - 1);
                   for (int i = 1; i < p.length; i++) m.put(Long.parseLong(p[i]), i); w.println(m); break; }
      case "I": { long s = Long.parseLong(p[1]), n = Long.parseLong(p[2]);
                  w.println(java.time.Instant.ofEpochSecond(s, n)); break; }
    }
  }
  w.flush();
}}
"""


def _java_major() -> int:
    out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    m = re.search(r'version "(\d+)', out)
    return int(m.group(1)) if m else 17


def test_renderings_match_the_jvm(tmp_path: Path) -> None:
    (tmp_path / "Fmt.java").write_text(_JAVA)
    subprocess.run(["javac", "Fmt.java"], cwd=tmp_path, check=True, capture_output=True)

    rng = random.Random(7)
    doubles: list[float] = []
    for _ in range(3000):
        doubles.append(rng.randint(0, 10**6) / 10 ** rng.randint(0, 6))
        doubles.append(rng.randint(1, 1000) / rng.randint(1, 1000))
        doubles.append(rng.uniform(0, 10 ** rng.randint(-8, 14)))
        doubles.append(float(rng.randint(0, 2 ** rng.randint(1, 62))))
    doubles += [0.0, -0.0, 1e-3, 1e7, 5e-324, 1e-45, 3.4028235e38, 1e39]
    words = ["".join(rng.choice("abcxyzé€😀") for _ in range(rng.randint(0, 6))) for _ in range(400)]
    lines = [f"N {struct.unpack('<Q', struct.pack('<d', d))[0]:016x}" for d in doubles]
    maps: list[tuple[str, list[object]]] = []
    for _ in range(200):
        n = rng.randint(0, 20)
        s_keys = list(dict.fromkeys(rng.choice(words) for _ in range(n)))
        s_keys = [k for k in s_keys if k and " " not in k]
        i_keys = list(dict.fromkeys(rng.randint(-(2**31), 2**31 - 1) for _ in range(n)))
        l_keys = list(dict.fromkeys(rng.randint(-(2**63), 2**63 - 1) for _ in range(n)))
        maps += [("MS", list(s_keys)), ("MI", list(i_keys)), ("ML", list(l_keys))]
    lines += [" ".join([kind, *map(str, keys)]) for kind, keys in maps]
    nanos = [0, 5, 120_000, 123_456_000, 999_999_999]
    instants = [(rng.randint(-(10**10), 10**11), rng.choice(nanos)) for _ in range(200)]
    lines += [f"I {s} {n}" for s, n in instants]

    out = subprocess.run(
        ["java", "-cp", str(tmp_path), "Fmt"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    ).stdout.splitlines()
    assert len(out) == len(lines)

    previous = set_java_number_style("jdk17" if _java_major() < 19 else "jdk19")
    try:
        mismatches = []
        for d, got in zip(doubles, out, strict=False):
            jd, jf = got.split(" ")
            if java_double_to_string(d) != jd or java_float_to_string(d) != jf:
                mismatches.append((d, got, java_double_to_string(d), java_float_to_string(d)))
        assert mismatches == []
    finally:
        set_java_number_style(previous)

    key_types = {"MS": Types.STRING(), "MI": Types.INT(), "ML": Types.LONG()}
    for (kind, keys), got in zip(maps, out[len(doubles) :], strict=False):
        fmt = Types.MAP(key_types[kind], Types.INT()).make_formatter()
        assert fmt({k: i + 1 for i, k in enumerate(keys)}) == got
    for (s, n), got in zip(instants, out[len(doubles) + len(maps) :], strict=True):
        assert java_instant_to_string(s, n) == got
