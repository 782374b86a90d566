package jmspy.interop;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.jms.JmsConnectionFactory;

/**
 * The Qpid JMS side of benchmarks/delay_lateness.py: a MessageListener on one queue that
 * records, for each scheduled message, how late it arrived: wall clock at onMessage minus the
 * message's long property "due", the epoch ms its producer asked the broker to deliver it at.
 *
 * <p>Messages with the boolean property "warmup" (sent first, without delay, so that the JVM
 * has loaded and compiled the receive path before the scheduled messages come) are not
 * counted.
 *
 * <p>Usage: {@code DelayLatenessConsumer url user password queue count timeoutMs}. Prints
 * {@code READY} once the consumer is attached and the connection started, then one line
 * {@code LATENESS_US v1 v2 ...} (microseconds, arrival order) and exits 0; exits 1 with the
 * reason on stderr when not every message arrived in time.
 */
public final class DelayLatenessConsumer {

    private DelayLatenessConsumer() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: DelayLatenessConsumer url user password queue count timeoutMs");
            System.exit(2);
        }
        String url = args[0];
        String queueName = args[3];
        int count = Integer.parseInt(args[4]);
        long timeoutMs = Long.parseLong(args[5]);
        long[] lateness = new long[count];
        int[] seen = new int[1];
        CountDownLatch done = new CountDownLatch(count);
        Clock clock = Clock.systemUTC();
        JmsConnectionFactory factory = new JmsConnectionFactory(args[1], args[2], url);
        Connection connection = factory.createConnection();
        int status = 0;
        try {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = session.createConsumer(session.createQueue(queueName));
            consumer.setMessageListener(
                    (Message message) -> {
                        Instant now = clock.instant();
                        long nowUs = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000L;
                        try {
                            if (message.propertyExists("warmup")) {
                                return;
                            }
                            long dueMs = message.getLongProperty("due");
                            if (seen[0] < count) {
                                lateness[seen[0]++] = nowUs - dueMs * 1_000L;
                            }
                        } catch (JMSException e) {
                            e.printStackTrace();
                        }
                        done.countDown();
                    });
            connection.start();
            System.out.println("READY");
            System.out.flush();
            if (!done.await(timeoutMs, TimeUnit.MILLISECONDS)) {
                System.err.println("only " + seen[0] + " of " + count + " messages arrived");
                status = 1;
            }
            StringBuilder line = new StringBuilder("LATENESS_US");
            for (int i = 0; i < seen[0]; i++) {
                line.append(' ').append(lateness[i]);
            }
            System.out.println(line);
            System.out.flush();
        } finally {
            connection.close();
        }
        System.exit(status);
    }
}
