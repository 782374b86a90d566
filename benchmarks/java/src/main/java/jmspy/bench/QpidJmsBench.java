package jmspy.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.management.OperatingSystemMXBean;
import jakarta.jms.BytesMessage;
import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.apache.qpid.jms.util.MetaDataSupport;

/**
 * The Qpid JMS side of the jmspy benchmarks: one program, one method per mode.
 *
 * <p>Usage: {@code java -jar qpid-jms-bench.jar MODE < request.json} runs one request (one JSON
 * object on stdin, one JSON object on stdout); {@code java -jar qpid-jms-bench.jar serve} reads
 * requests as JSON lines, each naming its {@code mode}, and answers each with one JSON line, so
 * one JVM (and its JIT) serves every round of a benchmark. A failure answers {@code {"error":
 * class, "message": text}} (exit status 1 in the one-shot form).
 *
 * <p>Every request carries {@code url}, {@code user}, {@code password}. Timed results report
 * {@code wallNs} and {@code cpuNs}: the wall-clock and the CPU time of this whole JVM (all its
 * threads, JIT and GC included) over the timed part.
 *
 * <p>To add a mode, write a {@code static ObjectNode name(Request r) throws Exception} method
 * and register it in {@link #MODES}.
 */
public final class QpidJmsBench {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final OperatingSystemMXBean OS =
            (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /** A benchmark mode: one request in, one result out. */
    @FunctionalInterface
    interface Mode {
        ObjectNode run(Request request) throws Exception;
    }

    /** The modes by name; add new ones here. */
    static final Map<String, Mode> MODES = new LinkedHashMap<>();

    static {
        MODES.put("ping", QpidJmsBench::ping);
        MODES.put("send", QpidJmsBench::send);
        MODES.put("receive", QpidJmsBench::receive);
        MODES.put("scale", QpidJmsBench::scale);
    }

    private QpidJmsBench() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: qpid-jms-bench MODE < request.json | serve; modes " + MODES.keySet());
            System.exit(2);
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        if (args[0].equals("serve")) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode request = MAPPER.readTree(line);
                out.println(MAPPER.writeValueAsString(dispatch(request.path("mode").asText(), request)));
            }
            return;
        }
        ObjectNode result = dispatch(args[0], MAPPER.readTree(in));
        out.println(MAPPER.writeValueAsString(result));
        System.exit(result.has("error") ? 1 : 0);
    }

    static ObjectNode dispatch(String name, JsonNode json) {
        Mode mode = MODES.get(name);
        if (mode == null) {
            return error("IllegalArgumentException", "unknown mode " + name + "; modes " + MODES.keySet());
        }
        try {
            return mode.run(new Request(json));
        } catch (Exception | AssertionError e) {
            return error(e.getClass().getName(), String.valueOf(e.getMessage()));
        }
    }

    static ObjectNode error(String kind, String message) {
        ObjectNode node = MAPPER.createObjectNode();
        node.put("error", kind);
        node.put("message", message);
        return node;
    }

    /** A request: the JSON fields with defaults, and the connection it names. */
    static final class Request {
        final JsonNode json;

        Request(JsonNode json) {
            this.json = json;
        }

        String text(String field) {
            JsonNode node = json.get(field);
            if (node == null || node.isNull()) {
                throw new IllegalArgumentException("request has no " + field);
            }
            return node.asText();
        }

        int integer(String field, int otherwise) {
            return json.path(field).asInt(otherwise);
        }

        boolean flag(String field) {
            return json.path(field).asBoolean(false);
        }

        /** A connection to the request's broker; {@code options} are Qpid JMS URI options. */
        Connection connect(String options) throws JMSException {
            String url = text("url");
            if (!options.isEmpty()) {
                url += (url.contains("?") ? "&" : "?") + options;
            }
            JmsConnectionFactory factory = new JmsConnectionFactory(text("user"), text("password"), url);
            return factory.createConnection();
        }
    }

    /** Wall-clock and whole-JVM CPU time from its creation. */
    static final class Stopwatch {
        final long wall = System.nanoTime();
        final long cpu = OS.getProcessCpuTime();

        ObjectNode stop(int count) {
            long cpuNow = OS.getProcessCpuTime();
            long wallNow = System.nanoTime();
            ObjectNode node = MAPPER.createObjectNode();
            node.put("count", count);
            node.put("wallNs", wallNow - wall);
            node.put("cpuNs", cpuNow - cpu);
            return node;
        }
    }

    static ObjectNode ping(Request r) {
        ObjectNode node = MAPPER.createObjectNode();
        node.put("pong", true);
        node.put("java", System.getProperty("java.version"));
        node.put("qpidJms", MetaDataSupport.PROVIDER_VERSION);
        return node;
    }

    // ---- send ----------------------------------------------------------------------------------

    /**
     * {@code queue}, {@code count}, {@code warmup}, {@code size}, {@code persistent}: sends
     * {@code warmup} untimed then {@code count} timed BytesMessages. Persistent sends are
     * synchronous (one round trip each) and report {@code p50Ns}/{@code p99Ns}/{@code maxNs} per
     * send. Non-persistent sends are asynchronous; the timed part ends when the broker has settled
     * the last one (its CompletionListener: Qpid JMS completes a session's sends in order).
     */
    static ObjectNode send(Request r) throws Exception {
        int count = r.integer("count", 1000);
        int warmup = r.integer("warmup", 0);
        boolean persistent = r.flag("persistent");
        byte[] payload = payload(r.integer("size", 1024));
        try (Connection connection = r.connect("")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = session.createQueue(r.text("queue"));
            MessageProducer producer = session.createProducer(queue);
            producer.setDeliveryMode(persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
            sendTimed(session, producer, payload, warmup, persistent, null);
            long[] latencies = persistent ? new long[count] : null;
            Stopwatch watch = new Stopwatch();
            sendTimed(session, producer, payload, count, persistent, latencies);
            ObjectNode result = watch.stop(count);
            if (latencies != null && count > 0) {
                Arrays.sort(latencies);
                result.put("p50Ns", percentile(latencies, 0.50));
                result.put("p99Ns", percentile(latencies, 0.99));
                result.put("maxNs", latencies[count - 1]);
            }
            producer.close();
            return result;
        }
    }

    private static void sendTimed(
            Session session, MessageProducer producer, byte[] payload, int count, boolean persistent, long[] latencies)
            throws Exception {
        for (int i = 0; i < count; i++) {
            BytesMessage message = session.createBytesMessage();
            message.writeBytes(payload);
            if (latencies != null) {
                long started = System.nanoTime();
                producer.send(message);
                latencies[i] = System.nanoTime() - started;
            } else if (!persistent && i == count - 1) {
                awaitSettled(producer, message);
            } else {
                producer.send(message);
            }
        }
    }

    private static void awaitSettled(MessageProducer producer, Message message) throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Exception> failed = new AtomicReference<>();
        producer.send(message, new CompletionListener() {
            @Override
            public void onCompletion(Message m) {
                done.countDown();
            }

            @Override
            public void onException(Message m, Exception e) {
                failed.set(e);
                done.countDown();
            }
        });
        if (!done.await(300, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the last send was not settled within 300 s");
        }
        if (failed.get() != null) {
            throw failed.get();
        }
    }

    // ---- receive -------------------------------------------------------------------------------

    /**
     * {@code queue}, {@code count}, {@code warmup}, {@code size}, {@code prefetch},
     * {@code listener}, {@code timeoutMs}: receives {@code warmup} untimed then {@code count}
     * timed messages in AUTO_ACKNOWLEDGE, with {@code receive(timeout)} or a MessageListener,
     * checking every body's length. Too few messages is an error naming how many came.
     */
    static ObjectNode receive(Request r) throws Exception {
        int count = r.integer("count", 1000);
        int warmup = r.integer("warmup", 0);
        int size = r.integer("size", 1024);
        int timeoutMs = r.integer("timeoutMs", 10_000);
        String options = "jms.prefetchPolicy.all=" + r.integer("prefetch", 1000);
        try (Connection connection = r.connect(options)) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = session.createConsumer(session.createQueue(r.text("queue")));
            if (r.flag("listener")) {
                return listen(connection, consumer, warmup, count, size, timeoutMs);
            }
            connection.start();
            receiveChecked(consumer, warmup, size, timeoutMs);
            Stopwatch watch = new Stopwatch();
            receiveChecked(consumer, count, size, timeoutMs);
            ObjectNode result = watch.stop(count);
            consumer.close();
            return result;
        }
    }

    private static void receiveChecked(MessageConsumer consumer, int count, int size, int timeoutMs)
            throws JMSException {
        for (int i = 0; i < count; i++) {
            Message message = consumer.receive(timeoutMs);
            if (message == null) {
                throw new IllegalStateException(
                        "nothing received within " + timeoutMs + " ms after " + i + " of " + count + " messages");
            }
            checkSize(message, size);
        }
    }

    private static void checkSize(Message message, int size) throws JMSException {
        long length = ((BytesMessage) message).getBodyLength();
        if (length != size) {
            throw new IllegalStateException("received a body of " + length + " bytes, expected " + size);
        }
    }

    private static ObjectNode listen(
            Connection connection, MessageConsumer consumer, int warmup, int count, int size, int timeoutMs)
            throws Exception {
        int total = warmup + count;
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Stopwatch> watch = new AtomicReference<>();
        AtomicReference<ObjectNode> result = new AtomicReference<>();
        AtomicReference<Exception> failed = new AtomicReference<>();
        AtomicInteger seen = new AtomicInteger();
        AtomicLong last = new AtomicLong(System.nanoTime());
        consumer.setMessageListener(message -> {
            try {
                checkSize(message, size);
            } catch (Exception e) {
                failed.compareAndSet(null, e);
                done.countDown();
                return;
            }
            int now = seen.incrementAndGet();
            last.set(System.nanoTime());
            if (now == warmup) {
                watch.set(new Stopwatch());
            }
            if (now == total) {
                result.set(watch.get().stop(count));
                done.countDown();
            }
        });
        if (warmup == 0) {
            watch.set(new Stopwatch());
        }
        connection.start();
        // Waits while messages keep coming: a stall of timeoutMs fails the run.
        while (!done.await(timeoutMs, TimeUnit.MILLISECONDS)) {
            if (System.nanoTime() - last.get() > TimeUnit.MILLISECONDS.toNanos(timeoutMs)) {
                throw new IllegalStateException(
                        "the listener got " + seen.get() + " of " + total + " messages, then nothing for " + timeoutMs + " ms");
            }
        }
        if (failed.get() != null) {
            throw failed.get();
        }
        consumer.close();
        return result.get();
    }

    // ---- scale ---------------------------------------------------------------------------------

    /**
     * {@code queue}, {@code count}, {@code size}, {@code connections}, {@code sharedThreads},
     * {@code sessionMode} (the consumers' session mode, AUTO_ACKNOWLEDGE by default; 257 is
     * Qpid JMS's NO_ACKNOWLEDGE, presettled consumers),
     * {@code timeoutMs}: {@code connections} connections, each with one session
     * and a MessageListener on the queue (competing consumers), and one more that sends
     * {@code count} non-persistent BytesMessages numbered by an int property {@code seq}, all in
     * this JVM. With {@code sharedThreads} > 0 every connection asks for
     * {@code transport.sharedEventLoopThreads}. Timed from the first send to the last message
     * delivered; a message delivered twice, or too few within a stall of {@code timeoutMs}, is an
     * error. Also reports the live threads of the main thread group while the messages flow
     * ({@code threads}).
     */
    static ObjectNode scale(Request r) throws Exception {
        int count = r.integer("count", 1000);
        int size = r.integer("size", 1024);
        int connections = r.integer("connections", 1);
        int shared = r.integer("sharedThreads", 0);
        int sessionMode = r.integer("sessionMode", Session.AUTO_ACKNOWLEDGE);
        int timeoutMs = r.integer("timeoutMs", 60_000);
        String options = shared > 0 ? "transport.sharedEventLoopThreads=" + shared : "";
        String queueName = r.text("queue");
        BitSet seen = new BitSet(count);
        AtomicInteger delivered = new AtomicInteger();
        AtomicInteger duplicates = new AtomicInteger();
        AtomicReference<Exception> failed = new AtomicReference<>();
        AtomicLong last = new AtomicLong(System.nanoTime());
        CountDownLatch done = new CountDownLatch(1);
        List<Connection> opened = new ArrayList<>();
        try {
            for (int i = 0; i < connections; i++) {
                Connection connection = r.connect(options);
                opened.add(connection);
                Session session = connection.createSession(false, sessionMode);
                MessageConsumer consumer = session.createConsumer(session.createQueue(queueName));
                consumer.setMessageListener(message -> {
                    try {
                        checkSize(message, size);
                        int seq = message.getIntProperty("seq");
                        boolean again;
                        synchronized (seen) {
                            again = seen.get(seq);
                            seen.set(seq);
                        }
                        if (again) {
                            duplicates.incrementAndGet();
                        } else if (delivered.incrementAndGet() == count) {
                            done.countDown();
                        }
                        last.set(System.nanoTime());
                    } catch (Exception e) {
                        failed.compareAndSet(null, e);
                        done.countDown();
                    }
                });
                connection.start();
            }
            Connection sender = r.connect(options);
            opened.add(sender);
            Session session = sender.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(session.createQueue(queueName));
            producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
            byte[] payload = payload(size);
            Stopwatch watch = new Stopwatch();
            for (int seq = 0; seq < count; seq++) {
                BytesMessage message = session.createBytesMessage();
                message.writeBytes(payload);
                message.setIntProperty("seq", seq);
                producer.send(message);
            }
            int threads = Thread.activeCount();
            last.set(System.nanoTime());
            // Waits while messages keep coming: a stall of timeoutMs fails the run.
            while (!done.await(timeoutMs, TimeUnit.MILLISECONDS)) {
                if (System.nanoTime() - last.get() > TimeUnit.MILLISECONDS.toNanos(timeoutMs)) {
                    throw new IllegalStateException(
                            connections + " connections: " + delivered.get() + " of " + count
                                    + " messages arrived, then nothing for " + timeoutMs + " ms");
                }
            }
            if (failed.get() != null) {
                throw failed.get();
            }
            ObjectNode result = watch.stop(count);
            result.put("threads", Math.max(threads, Thread.activeCount()));
            result.put("duplicates", duplicates.get());
            return result;
        } finally {
            for (Connection connection : opened) {
                try {
                    connection.close();
                } catch (JMSException e) {
                    // closing after the run: nothing left to report it to
                }
            }
        }
    }

    // ---- helpers -------------------------------------------------------------------------------

    static byte[] payload(int size) {
        byte[] payload = new byte[size];
        for (int i = 0; i < size; i++) {
            payload[i] = (byte) i;
        }
        return payload;
    }

    static long percentile(long[] sorted, double q) {
        int index = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
}
