import { StatusBar } from 'expo-status-bar';
import { Image, ScrollView, StyleSheet, Text, View } from 'react-native';
import settings from './src/app-settings.json';

/** The app's look and content; the service keeps `src/app-settings.json` in sync with the project. */
interface AppSettings {
  name: string;
  subtitle: string;
  accentColor: string;
  darkMode: boolean;
  instructions: string[];
}

const app: AppSettings = settings;

export default function App() {
  const background = app.darkMode ? '#111418' : '#ffffff';
  const text = app.darkMode ? '#f2f4f7' : '#1b1f24';
  return (
    <View style={[styles.container, { backgroundColor: background }]}>
      <View style={[styles.header, { backgroundColor: app.accentColor }]}>
        <View style={styles.titleRow}>
          <Image source={require('./assets/favicon.png')} style={styles.logo} />
          <Text style={styles.title} testID="app-name">{app.name}</Text>
        </View>
        {app.subtitle ? <Text style={styles.subtitle}>{app.subtitle}</Text> : null}
      </View>
      <ScrollView contentContainerStyle={styles.body}>
        <Text style={[styles.heading, { color: text }]}>What this app was asked to be</Text>
        {app.instructions.length === 0 ? (
          <Text style={[styles.item, { color: text }]}>No instructions yet.</Text>
        ) : (
          app.instructions.map((instruction, index) => (
            <Text key={index} style={[styles.item, { color: text }]}>
              {index + 1}. {instruction}
            </Text>
          ))
        )}
      </ScrollView>
      <StatusBar style={app.darkMode ? 'light' : 'dark'} />
    </View>
  );
}

const styles = StyleSheet.create({
  container: { flex: 1 },
  header: { paddingTop: 56, paddingBottom: 24, paddingHorizontal: 20 },
  titleRow: { flexDirection: 'row', alignItems: 'center', gap: 10 },
  logo: { width: 32, height: 32, borderRadius: 6 },
  title: { color: '#ffffff', fontSize: 28, fontWeight: '700' },
  subtitle: { color: '#ffffff', fontSize: 16, marginTop: 6, opacity: 0.9 },
  body: { padding: 20, gap: 8 },
  heading: { fontSize: 18, fontWeight: '600', marginBottom: 4 },
  item: { fontSize: 15, lineHeight: 22 },
});
