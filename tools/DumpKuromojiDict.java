// Lucene 9.5's Kuromoji dictionary (IPADIC) as Lucene orders it, for tools/make_ja_order_goldens.py (a developer tool).
// Run: java -cp anserini-0.22.1-fatjar.jar tools/DumpKuromojiDict.java OUT.tsv
import org.apache.lucene.analysis.ja.dict.*;
import org.apache.lucene.util.IntsRef;
import org.apache.lucene.util.fst.FST;
import org.apache.lucene.util.fst.IntsRefFSTEnum;
import java.io.*;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;

// Every surface of Lucene's Kuromoji TokenInfoDictionary (IPADIC), every word id in Lucene's order:
// surface \t n(word ids of surface) \t index \t wordId \t left \t right \t cost \t pos \t inflType \t inflForm \t base \t reading \t pronunciation
// (base/reading/pronunciation as Lucene's getters return them; null printed as \N). Also: FST ord -> surface order check.
public class DumpKuromojiDict {
  public static void main(String[] args) throws Exception {
    TokenInfoDictionary dict = TokenInfoDictionary.getInstance();
    TokenInfoFST tfst = dict.getFST();
    Method m = TokenInfoFST.class.getDeclaredMethod("getInternalFST");
    m.setAccessible(true);
    @SuppressWarnings("unchecked")
    FST<Long> fst = (FST<Long>) m.invoke(tfst);
    IntsRefFSTEnum<Long> e = new IntsRefFSTEnum<>(fst);
    IntsRef ids = new IntsRef();
    PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(new FileOutputStream(args[0]), StandardCharsets.UTF_8)));
    IntsRefFSTEnum.InputOutput<Long> io;
    long surfaces = 0, entries = 0, multi = 0, lastOrd = -1; int maxId = -1; boolean ordsIncreasing = true;
    while ((io = e.next()) != null) {
      IntsRef in = io.input;
      char[] cs = new char[in.length];
      for (int i = 0; i < in.length; i++) cs[i] = (char) in.ints[in.offset + i];
      String s = new String(cs);
      int ord = io.output.intValue();
      if (ord <= lastOrd) ordsIncreasing = false;
      lastOrd = ord;
      dict.lookupWordIds(ord, ids);
      surfaces++;
      if (ids.length > 1) multi++;
      for (int k = 0; k < ids.length; k++) {
        int w = ids.ints[ids.offset + k];
        entries++;
        if (w <= maxId) ordsIncreasing = false;  // word ids increase along FST order too
        maxId = Math.max(maxId, w);
        out.print(s + "\t" + ids.length + "\t" + k + "\t" + w + "\t" + dict.getLeftId(w) + "\t" + dict.getRightId(w) + "\t" + dict.getWordCost(w)
            + "\t" + dict.getPartOfSpeech(w) + "\t" + nz(dict.getInflectionType(w)) + "\t" + nz(dict.getInflectionForm(w))
            + "\t" + nz(dict.getBaseForm(w, cs, 0, cs.length)) + "\t" + nz(dict.getReading(w, cs, 0, cs.length))
            + "\t" + nz(dict.getPronunciation(w, cs, 0, cs.length)) + "\n");
      }
    }
    out.close();
    System.out.println("surfaces=" + surfaces + " entries=" + entries + " surfaces_with_2plus=" + multi + " ords_and_wordids_increasing=" + ordsIncreasing);
  }
  static String nz(String s) { return s == null ? "\\N" : s; }
}
