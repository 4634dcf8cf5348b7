// Lucene's tokens for texts, one analyzer per language as Anserini 0.22.1 picks it (a developer tool for the
// goldens: tests/goldens/make_lang_cases.py compiles and runs it against Anserini's fat jar; CI never does).
// Input lines: id<TAB>hex of the text's UTF-8 bytes (any text, empty and whitespace-only ones included).
// Output lines: id<TAB>space-separated hex of each token's UTF-8 bytes ("-" for an empty token).
import io.anserini.analysis.AnalyzerMap;
import io.anserini.index.IndexCollection;
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;

public class Tokens {
  static String hex(String s) {
    StringBuilder sb = new StringBuilder();
    for (byte x : s.getBytes(StandardCharsets.UTF_8)) sb.append(String.format("%02x", x & 0xff));
    return sb.toString();
  }

  static String unhex(String h) {
    byte[] b = new byte[h.length() / 2];
    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
    return new String(b, StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws Exception {
    // DumpAnalyzedQueries' choice: the language's analyzer where Anserini maps one, else its default (English)
    String lang = args[0];
    Analyzer a = AnalyzerMap.analyzerMap.containsKey(lang)
        ? AnalyzerMap.getLanguageSpecificAnalyzer(lang) : IndexCollection.DEFAULT_ANALYZER;
    try (BufferedReader r = new BufferedReader(new InputStreamReader(new FileInputStream(args[1]), StandardCharsets.UTF_8));
         PrintStream out = new PrintStream(new FileOutputStream(args[2]), true, "UTF-8")) {
      String line;
      while ((line = r.readLine()) != null) {
        int tab = line.indexOf('\t');
        StringBuilder sb = new StringBuilder();
        try (TokenStream ts = a.tokenStream("contents", new StringReader(unhex(line.substring(tab + 1))))) {
          CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
          ts.reset();
          while (ts.incrementToken()) sb.append(' ').append(term.length() == 0 ? "-" : hex(term.toString()));
          ts.end();
        }
        out.println(line.substring(0, tab) + "\t" + sb.toString().trim());
      }
    }
  }
}
