import java.io.BufferedInputStream;
import java.io.InputStream;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * Reads a zip from stdin with the JDK's streaming reader, as a Java consumer of our archives
 * would, and prints one tab-separated line per entry: name, method, then the size, compressed
 * size and CRC that the local header announced (-1 when it announced none, as with a data
 * descriptor), then the bytes and CRC actually read. ZipInputStream itself throws when the data
 * does not match the header.
 */
public class ZipStreamCheck {
  public static void main(String[] args) throws Exception {
    InputStream in = new BufferedInputStream(System.in, 1 << 16);
    try (ZipInputStream zip = new ZipInputStream(in)) {
      byte[] buffer = new byte[1 << 16];
      ZipEntry entry;
      while ((entry = zip.getNextEntry()) != null) {
        long announcedSize = entry.getSize();
        long announcedCompressed = entry.getCompressedSize();
        long announcedCrc = entry.getCrc();
        CRC32 crc = new CRC32();
        long read = 0;
        for (int n; (n = zip.read(buffer)) > 0; ) {
          crc.update(buffer, 0, n);
          read += n;
        }
        System.out.println(String.join("\t", entry.getName(), String.valueOf(entry.getMethod()),
            String.valueOf(announcedSize), String.valueOf(announcedCompressed), String.valueOf(announcedCrc),
            String.valueOf(read), String.valueOf(crc.getValue())));
      }
    }
  }
}
