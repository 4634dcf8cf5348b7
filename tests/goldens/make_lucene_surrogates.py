"""Makes ``tests/goldens/lucene/surrogates.jsonl``: Lucene's terms of texts holding lone surrogates (valid JSON, as a
truncated emoji in a web dump is), for the languages whose tokenizer is not the StandardTokenizer (Japanese's
Kuromoji, Thai's break iterator, the WhitespaceTokenizer of Swahili and Yoruba) and a few that use it. A developer
tool: it runs where the oracle is (Java 17 with its compiler, the Anserini 0.22.1 fat jar from the pyserini==0.22.1
wheel); CI never runs it::

    ANSERINI_JAR=.../anserini-0.22.1-fatjar.jar python tests/goldens/make_lucene_surrogates.py

A text cannot reach Lucene through a topics file with a lone surrogate in it (UTF-8 cannot hold one), so a small
Java program reads the texts as JSON (Jackson keeps a lone ``\\ud83d`` escape as one char, as Anserini's JSON
collections read it), analyses each with the analyzer Anserini 0.22.1 gives ``-language xx`` (its default
English analyzer for ``en``, Lucene's WhitespaceAnalyzer for ``sw`` and ``yo``) and writes each term as the index
stores it (UTF-8: ``new BytesRef(term).utf8ToString()``, a lone surrogate becoming U+FFFD).

Texts whose last character is a lone high surrogate are left out: Lucene's StandardTokenizer then loses the tokens
of the last piece of text it reads into its buffer (a short text's every token), which the analyzers here do not
copy (README, "Languages").
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "goldens" / "lucene" / "surrogates.jsonl"
LANGUAGES = ("en", "ja", "th", "sw", "yo", "zh", "ko", "ar", "hi", "de")

JAVA = r"""
import io.anserini.analysis.*;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.util.BytesRef;
import com.fasterxml.jackson.databind.*;
import java.nio.file.*;
import java.util.*;

public class SurrogateTerms {
  public static void main(String[] args) throws Exception {
    ObjectMapper json = new ObjectMapper();
    Map<String, Analyzer> analyzers = new HashMap<>();
    try (java.io.PrintWriter out = new java.io.PrintWriter(args[1], "UTF-8")) {
      for (String line : Files.readAllLines(Paths.get(args[0]))) {
        JsonNode row = json.readTree(line);
        String lang = row.get("language").asText();
        Analyzer an = analyzers.computeIfAbsent(lang, l -> l.equals("en") ? DefaultEnglishAnalyzer.newDefaultInstance()
            : (l.equals("sw") || l.equals("yo")) ? new WhitespaceAnalyzer() : AnalyzerMap.getLanguageSpecificAnalyzer(l));
        List<String> terms = new ArrayList<>();
        for (String t : AnalyzerUtils.analyze(an, row.get("text").asText())) terms.add(new BytesRef(t).utf8ToString());
        out.println(json.writeValueAsString(terms));
      }
    }
  }
}
"""


def texts() -> list[str]:
    """Lone high and low surrogates at the start, inside and between words of several scripts, next to spaces
    and punctuation, beside a whole pair, and alone."""
    hi, lo = "\ud83d", "\ude00"
    words = ["broken", "東京大学", "テスト", "ภาษาไทย", "한국어", "Straße", "कंप्यूटर", "العربية", "habari"]
    out = [f"{hi} ", lo, f"{lo}{hi} x", f"{hi}{hi}\U0001f600 x"]
    for w in words:
        out += [
            f"{w} {hi} emoji",
            f"{w}{hi}{w}",
            f"{hi}{w}",
            f"{lo}{w} end",
            f"{w}{lo}",
            f"({w}{hi}) {w}, {lo}.",
            f"{w}{hi}\U0001f600{w}",
        ]
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source, rows, out = Path(tmp) / "SurrogateTerms.java", Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
        source.write_text(JAVA)
        cases = [{"language": lang, "text": t} for lang in LANGUAGES for t in texts()]
        # json.dumps escapes a lone surrogate as \udXXX (ensure_ascii): the file is ASCII
        rows.write_text("".join(json.dumps(case) + "\n" for case in cases))
        subprocess.run(
            ["java", "-cp", os.environ["ANSERINI_JAR"], str(source), str(rows), str(out)],
            check=True, capture_output=True,
        )  # fmt: skip
        # one line of terms a text, in order (the texts are not written back: Java's UTF-8 cannot hold them)
        terms = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(terms) == len(cases)
    with open(OUT, "w", encoding="utf-8") as f:
        for case, found in zip(cases, terms):
            f.write(json.dumps({**case, "terms": found}) + "\n")
    print(f"wrote {len(cases)} texts to {OUT}")


if __name__ == "__main__":
    main()
