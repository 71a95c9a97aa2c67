import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Readiness probe for services/up: the broker counts as up only when a client can create a
 * topic, produce a record, read it back and commit an offset for a consumer group (which also
 * creates the group-offsets topic before the first test needs it). Retries until the deadline.
 * Usage: KafkaProbe BOOTSTRAP SECONDS; exit 0 when usable, 1 otherwise.
 */
public final class KafkaProbe {
    private static final String TOPIC = "gangscope-probe";

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        long deadline = System.nanoTime() + Duration.ofSeconds(Long.parseLong(args[1])).toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                roundTrip(bootstrap);
                System.exit(0);
            } catch (Exception e) {
                last = e;
                Thread.sleep(500);
            }
        }
        System.err.println("kafka probe: not usable at " + bootstrap + ": " + last);
        System.exit(1);
    }

    private static void roundTrip(String bootstrap) throws Exception {
        Properties common = new Properties();
        common.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        common.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        common.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        try (Admin admin = Admin.create(common)) {
            try {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) throw e;
            }
        }
        String nonce = UUID.randomUUID().toString();
        Properties producerProps = new Properties();
        producerProps.putAll(common);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
        producerProps.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "15000");
        RecordMetadata sent;
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(producerProps, new StringSerializer(), new StringSerializer())) {
            sent = producer.send(new ProducerRecord<>(TOPIC, "probe", nonce)).get();
        }
        Properties consumerProps = new Properties();
        consumerProps.putAll(common);
        consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, "gangscope-probe");
        consumerProps.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        TopicPartition partition = new TopicPartition(TOPIC, sent.partition());
        try (KafkaConsumer<String, String> consumer =
                 new KafkaConsumer<>(consumerProps, new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(List.of(partition));
            consumer.seek(partition, sent.offset());
            long until = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            while (System.nanoTime() < until) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    if (nonce.equals(record.value())) {
                        consumer.commitSync(Map.of(partition, new OffsetAndMetadata(record.offset() + 1)),
                                            Duration.ofSeconds(15));
                        return;
                    }
                }
            }
        }
        throw new IllegalStateException("produced record at offset " + sent.offset() + " was not read back");
    }
}
